//! Repetition: a character, token, word or phrase pattern said over and over (a loop), told from
//! a word said a few times for emphasis; and the token checks a decoder runs as it goes (a loop
//! at the end of its tokens, its own start said again).

use super::*;

/// The longest pattern (in characters) looked for as a repetition.
pub(super) const MAX_PATTERN_CHARS: usize = 48;

/// A word said up to this many times in a row with words after it is speech ("very, very, very
/// good", "some more words, words, words, words. And that should be all"): whisper's loops of
/// one word run to the end of its text, or on for longer.
pub(super) const MOST_EMPHATIC_REPEATS: usize = 4;

/// Words that must follow such a run for it to be speech (a loop runs to the end).
pub(super) const WORDS_AFTER_EMPHASIS: usize = 1;

/// Segments in a row that say the same words (punctuation and case aside) three times: twice
/// is speech ("Yes." "Yes.", a line said again), three times a loop.
pub(super) fn repeated_segment(segments: &[Segment]) -> bool {
    let words = |s: &Segment| plain(&s.text);
    segments.windows(3).any(|three| {
        let first = words(&three[0]);
        !first.is_empty() && three[1..].iter().all(|s| words(s) == first)
    })
}

/// Words said again and again without a break, punctuation and case aside: one word four
/// times ("5 5 5 5", too short a pattern for the characters to show it; not an emphatic run,
/// [`is_emphasis`]), or two to four words three times. Gives the first word of the earliest
/// such run (counted in the text's whitespace-separated words) and the pattern's length in
/// words.
pub(super) fn word_repetition(text: &str) -> Option<(usize, usize)> {
    let words: Vec<String> = text.split_whitespace().map(plain).collect();
    (1..=4)
        .filter_map(|n| {
            let needed = if n == 1 { 4 } else { 3 };
            let span = n * needed;
            (words.len() >= span)
                .then(|| {
                    (0..=words.len() - span).find(|&start| {
                        let first = &words[start..start + n];
                        let repeated = first.iter().any(|w| !w.is_empty())
                            && (1..needed)
                                .all(|k| &words[start + k * n..start + (k + 1) * n] == first);
                        repeated && !(n == 1 && emphatic_words(&words, start))
                    })
                })
                .flatten()
                .map(|start| (start, n))
        })
        .min()
}

/// Whether the run of one word from `start` in `words` (plain) is said at most
/// [`MOST_EMPHATIC_REPEATS`] times, with [`WORDS_AFTER_EMPHASIS`] words or more after it.
pub(super) fn emphatic_words(words: &[String], start: usize) -> bool {
    let times = words[start..]
        .iter()
        .take_while(|w| **w == words[start])
        .count();
    is_emphasis(times, words.len() - start - times)
}

/// A run of one word said `times` times in a row, `after` words following it: speech said with
/// emphasis, not a loop ([`MOST_EMPHATIC_REPEATS`], [`WORDS_AFTER_EMPHASIS`]).
pub(super) fn is_emphasis(times: usize, after: usize) -> bool {
    times <= MOST_EMPHATIC_REPEATS && after >= WORDS_AFTER_EMPHASIS
}

/// The longest token pattern looked for at the end of a decode.
pub(super) const MAX_PATTERN_TOKENS: usize = 16;

/// Whether the text tokens decoded so far end in a pattern said over and over: a pattern of `n`
/// tokens as many times as a pattern of `n` characters needs in the text (a token is one
/// character or more), so that [`repetition`] finds what stopped the decode.
pub fn ends_in_loop(tokens: &[i32]) -> bool {
    (1..=MAX_PATTERN_TOKENS.min(tokens.len() / 3)).any(|n| {
        let needed = occurrences_needed(n);
        tokens.len() >= n * needed && {
            let tail = &tokens[tokens.len() - n..];
            (1..needed).all(|k| {
                let end = tokens.len() - k * n;
                &tokens[end - n..end] == tail
            })
        }
    })
}

/// Tokens of a decode's start (after its first, which may be written with or without a leading
/// space or capital) that said again mean it is saying its text a second time.
pub(super) const START_SAID_AGAIN_TOKENS: usize = 4;

/// Whether the text tokens decoded so far end in their own start said again: the
/// [`START_SAID_AGAIN_TOKENS`] after the first, not overlapping it. Whisper, made to read the
/// text said before a chunk, sometimes reads the chunk's sentence and then starts it over ("He
/// began a confused complaint against the wizard... He began a confused complaint..."). A
/// speaker who says it twice is heard so too, which is why a decode the whisper engine stops
/// there gives way to the chunk heard alone rather than being cut.
pub fn says_its_start_again(tokens: &[i32]) -> bool {
    let start = 1..1 + START_SAID_AGAIN_TOKENS;
    tokens.len() >= start.end + START_SAID_AGAIN_TOKENS
        && tokens[tokens.len() - START_SAID_AGAIN_TOKENS..] == tokens[start]
}

/// The fewest words a phrase said twice at the very end of a text needs for
/// [`ends_in_its_last_words_twice`]: "go on, go on" or "very, very" at the end are speech.
pub(super) const LAST_WORDS_SAID_TWICE: usize = 3;

/// Whether `text` ends in its last phrase of [`LAST_WORDS_SAID_TWICE`] words or more said twice
/// in a row (punctuation and case aside): "... by a similar process by a similar process".
/// Whisper reads a chunk that ends right where its speech does, through a window fitted to it,
/// so (tiny.en q8_0, LJSpeech clips trimmed to the reader's last word, in the development
/// `voices` set); heard through a window with
/// quiet after the speech it says the phrase once. Speakers say a phrase twice too, which is
/// why this is a doubt to hear again, not a loop to cut.
pub fn ends_in_its_last_words_twice(text: &str) -> bool {
    last_words_said_twice(text).is_some()
}

/// How many words the shortest phrase of [`LAST_WORDS_SAID_TWICE`] words or more that `text`
/// ends in twice in a row holds (punctuation and case aside); None when it ends in none.
pub fn last_words_said_twice(text: &str) -> Option<usize> {
    let words = words(text);
    (LAST_WORDS_SAID_TWICE..=words.len() / 2).find(|&n| {
        let end = words.len();
        words[end - n..] == words[end - 2 * n..end - n]
    })
}

/// Whether `text` ends in the last `n` words of `said` twice in a row (punctuation and case
/// aside).
pub fn ends_in_twice(text: &str, said: &str, n: usize) -> bool {
    let (words, said) = (words(text), words(said));
    if n == 0 || words.len() < 2 * n || said.len() < n {
        return false;
    }
    let phrase = &said[said.len() - n..];
    let end = words.len();
    &words[end - n..] == phrase && &words[end - 2 * n..end - n] == phrase
}

/// A pattern said again and again without a break, found in text normalised to lower case with
/// single spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repetition {
    /// Where its first occurrence starts, in characters of the normalised text.
    pub start: usize,
    /// Its length in characters.
    pub period: usize,
}

/// How many times in a row a pattern of `period` characters must occur to be a loop: a
/// character 8 times, two characters (`-y`) 8 times, a word or phrase of 6 or more characters
/// 3 times; in between, patterns about 16 characters long in all.
pub(super) fn occurrences_needed(period: usize) -> usize {
    16usize.div_ceil(period).clamp(3, 8)
}

/// The earliest repetition in `text`, on characters, so that it holds for text without spaces
/// too. A word said a few times in a row with words after it is speech ([`is_emphasis`]).
pub fn repetition(text: &str) -> Option<Repetition> {
    let chars = normalised(text);
    let n = chars.len();
    let mut earliest: Option<Repetition> = None;
    for period in 1..=MAX_PATTERN_CHARS.min(n / 2) {
        let needed = occurrences_needed(period);
        // `run`: how many characters in a row equal the one `period` before them.
        let mut run = 0;
        // Where the last emphatic run ends: no repetition is looked for inside it.
        let mut emphatic_until = 0;
        for i in period..n {
            if i < emphatic_until {
                continue;
            }
            if chars[i] == chars[i - period] {
                run += 1;
                let start = i + 1 - run - period;
                let pattern = &chars[start..start + period];
                // An occurrence missing only its marks (the last one, without the space or
                // comma the others have before the next) is said in full.
                let partial = run % period;
                let said_in_full =
                    partial > 0 && pattern[partial..].iter().all(|c| !c.is_alphanumeric());
                let occurrences = (run + period) / period + usize::from(said_in_full);
                if occurrences >= needed {
                    if let Some(end) = emphatic_chars(&chars, start, period) {
                        emphatic_until = end;
                        run = 0;
                        continue;
                    }
                    // Punctuation in one run is no speech loop ("..."); marks standing
                    // apart over and over (`" " " "`) are.
                    let apart_marks = pattern.contains(&' ') && pattern.iter().any(|c| *c != ' ');
                    if (pattern.iter().any(|c| c.is_alphanumeric()) || apart_marks)
                        && earliest.is_none_or(|e| start < e.start)
                    {
                        earliest = Some(Repetition { start, period });
                    }
                    break;
                }
            } else {
                run = 0;
            }
        }
    }
    earliest
}

/// When the pattern of `period` characters from `start` in `chars` (normalised) is one word
/// said over and over in an emphatic run ([`is_emphasis`]), where that run ends (the end of its
/// last word, marks included).
pub(super) fn emphatic_chars(chars: &[char], start: usize, period: usize) -> Option<usize> {
    let letters: String = chars[start..start + period]
        .iter()
        .filter(|c| c.is_alphanumeric())
        .collect();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
        let from = i;
        while i < chars.len() && chars[i] != ' ' {
            i += 1;
        }
        if i > from {
            spans.push(from..i);
        }
    }
    let words: Vec<String> = spans
        .iter()
        .map(|span| plain(&chars[span.clone()].iter().collect::<String>()))
        .collect();
    // The word the pattern's second occurrence falls in, and whether the pattern is that word
    // (from any of its letters on: a run found from inside the word before it).
    let second = spans.iter().position(|span| span.end > start + period)?;
    let word = &words[second];
    let same_word = !word.is_empty()
        && word.chars().count() == letters.chars().count()
        && format!("{word}{word}").contains(&letters);
    if !same_word {
        return None;
    }
    let first = (0..=second)
        .rev()
        .take_while(|&j| words[j] == *word)
        .last()?;
    let times = words[first..].iter().take_while(|w| *w == word).count();
    is_emphasis(times, words.len() - first - times).then(|| spans[first + times - 1].end)
}

/// `text` lower-cased with every run of whitespace made one space, as characters.
pub(super) fn normalised(text: &str) -> Vec<char> {
    let mut chars = Vec::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !chars.is_empty() {
            chars.push(' ');
        }
        chars.extend(word.chars().flat_map(char::to_lowercase));
    }
    chars
}
