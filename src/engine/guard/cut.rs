//! When every attempt loops: the text cut where the repetition starts, or cut to what the
//! chunk's time can hold, so that a loop never reaches anyone.

use super::repetition::normalised;
use super::*;

/// `segments` with the loop cut out: the text ends where the repetition starts (keeping its first
/// occurrence when that is a whole word or phrase, and never half a word), later segments are
/// dropped. Segments without a repetition come back as they are.
pub fn cut_loops(mut segments: Vec<Segment>) -> Vec<Segment> {
    // A segment said a third time in a row: keep its first time, drop what follows.
    if let Some(i) = (2..segments.len()).find(|&i| repeated_segment(&segments[i - 2..=i])) {
        segments.truncate(i - 1);
    }
    let text = joined(&segments);
    let normal = normalised(&text);
    // The earlier of the two cuts: by a character pattern, or by repeated words (up to the end
    // of the pattern's first occurrence, in whole words).
    let by_chars = repetition(&text).map(|found| kept_chars(&normal, found));
    let by_words = word_repetition(&text).map(|(start, n)| {
        let lengths: Vec<usize> = text
            .split_whitespace()
            .map(|w| w.chars().flat_map(char::to_lowercase).count())
            .collect();
        lengths[..start + n].iter().sum::<usize>() + start + n - 1
    });
    let Some(keep) = by_chars.into_iter().chain(by_words).min() else {
        return segments;
    };
    // Walk the segments in the same normalised form to find where the cut falls.
    let mut seen = 0;
    let mut kept = Vec::new();
    for mut segment in segments {
        let words = normalised(segment.text.trim());
        let separator = usize::from(seen > 0);
        if words.is_empty() {
            continue;
        }
        if seen + separator + words.len() <= keep {
            seen += separator + words.len();
            kept.push(segment);
            continue;
        }
        let inside = keep.saturating_sub(seen + separator);
        let text = prefix_of_normalised(segment.text.trim(), inside);
        if !text.is_empty() {
            // Its timed words, one for each word kept.
            segment.words.truncate(text.split_whitespace().count());
            segment.text = text;
            kept.push(segment);
        }
        break;
    }
    kept
}

/// What a chunk of `seconds` can hold of `segments`, for a loop with no pattern exact enough
/// to cut at ([`cut_loops`]): while they hold more than anyone says in that time, the last
/// segment goes, then the last words of the one left (its timed words with them, its tokens
/// in proportion). Segments within the time come back as they are.
pub fn within_time(mut segments: Vec<Segment>, seconds: f64) -> Vec<Segment> {
    let fast = |segments: &[Segment]| too_fast(segments, &joined(segments), seconds);
    while segments.len() > 1 && fast(&segments) {
        segments.pop();
    }
    let Some(last) = segments.pop() else {
        return segments;
    };
    if !fast(std::slice::from_ref(&last)) {
        segments.push(last);
        return segments;
    }
    let words: Vec<&str> = last.text.split_whitespace().collect();
    let tokens = last.detail.as_ref().map_or(0, |d| d.tokens.len());
    let shortened = |keep: usize| {
        let mut cut = last.clone();
        cut.text = words[..keep].join(" ");
        cut.words.truncate(keep);
        if let Some(detail) = &mut cut.detail {
            detail.tokens.truncate(tokens * keep / words.len().max(1));
        }
        cut
    };
    let fitting = (1..words.len())
        .rev()
        .map(shortened)
        .find(|cut| !fast(std::slice::from_ref(cut)));
    segments.extend(fitting);
    segments
}

/// `segments` without their last `n` words (punctuation-only tokens aside): whole segments from
/// the end, then the last words of the one left (its timed words with them, its tokens in
/// proportion), which keeps the sentence's end mark ("... a similar process, by a similar
/// process." less four words is "... a similar process.").
pub fn drop_last_words(mut segments: Vec<Segment>, n: usize) -> Vec<Segment> {
    let mut left = n;
    while left > 0 {
        let Some(mut last) = segments.pop() else {
            break;
        };
        let tokens: Vec<&str> = last.text.split_whitespace().collect();
        let said: Vec<usize> = (0..tokens.len())
            .filter(|&i| !plain(tokens[i]).is_empty())
            .collect();
        if said.len() <= left {
            left -= said.len();
            continue;
        }
        let keep = said.len() - left;
        let end_mark = last
            .text
            .trim_end()
            .chars()
            .last()
            .filter(|c| ".?!".contains(*c));
        let mut text = tokens[..=said[keep - 1]]
            .join(" ")
            .trim_end_matches([',', ';', ':', '-', ' '])
            .to_string();
        if let Some(mark) = end_mark.filter(|_| !text.ends_with(['.', '?', '!'])) {
            text.push(mark);
        }
        if last.text.starts_with(' ') {
            text.insert(0, ' ');
        }
        let timed = last.words.len();
        last.words.truncate(if timed == said.len() {
            keep
        } else {
            timed * keep / said.len()
        });
        if let Some(detail) = &mut last.detail {
            let tokens = detail.tokens.len();
            detail.tokens.truncate(tokens * keep / said.len().max(1));
        }
        last.text = text;
        segments.push(last);
        left = 0;
    }
    segments
}

/// How many characters of `normal` to keep before the repetition `found`: up to its first
/// occurrence's end when that ends a word, else up to its start, then back to the last whole
/// word.
pub(super) fn kept_chars(normal: &[char], found: Repetition) -> usize {
    let first_end = found.start + found.period;
    let ends_word = |at: usize| at >= normal.len() || normal[at] == ' ' || normal[at - 1] == ' ';
    let starts_word = |at: usize| at == 0 || normal[at - 1] == ' ' || normal[at] == ' ';
    let mut keep = if starts_word(found.start) && ends_word(first_end) {
        first_end
    } else {
        found.start
    };
    // Never half a word: back to the space before the word the cut falls in.
    if keep < normal.len() && keep > 0 && normal[keep] != ' ' && normal[keep - 1] != ' ' {
        keep = normal[..keep].iter().rposition(|&c| c == ' ').unwrap_or(0);
    }
    // No trailing space.
    while keep > 0 && normal[keep - 1] == ' ' {
        keep -= 1;
    }
    keep
}

/// The start of `text` (trimmed) that normalises to `count` characters, spaces as they were.
pub(super) fn prefix_of_normalised(text: &str, count: usize) -> String {
    let mut seen = 0;
    let mut out = String::new();
    for (i, word) in text.split_whitespace().enumerate() {
        let separator = usize::from(i > 0);
        let lowered: usize = word.chars().map(|c| c.to_lowercase().count()).sum();
        if seen + separator + lowered <= count {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(word);
            seen += separator + lowered;
        } else {
            break;
        }
    }
    out.trim_end_matches([',', '-', ' ']).to_string()
}
