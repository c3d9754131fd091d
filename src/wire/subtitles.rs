//! Subtitle files from timed segments: SubRip (`.srt`) and WebVTT (`.vtt`), as the OpenAI-compatible
//! routes and `verbatim transcribe --format srt|vtt` write them. Cues are numbered from 1 (SRT),
//! separated by a blank line, their text on lines of at most [`LINE_WIDTH`] characters.
//!
//! Cues are for reading: none lasts longer than [`MAX_CUE_SECS`] or holds more than
//! [`MAX_CUE_LINES`] lines. A longer segment (an engine that times whole chunks, or a prompt
//! that made Whisper write one long segment) is split, at a clause's punctuation where one
//! falls in the second half of a cue, else between words; each piece is timed by its share of
//! the segment's characters.

use super::transcription::TranscriptionSegment;

/// The longest subtitle line, in characters (the usual broadcast limit); a longer word keeps
/// its own line.
pub const LINE_WIDTH: usize = 42;

/// The longest cue, in seconds.
pub const MAX_CUE_SECS: f64 = 7.0;

/// The most lines a cue holds.
pub const MAX_CUE_LINES: usize = 2;

/// A SubRip file: `1\n00:00:00,000 --> 00:00:01,500\nText\n\n` per segment with text.
pub fn srt(segments: &[TranscriptionSegment]) -> String {
    let mut out = String::new();
    for (number, segment) in cues(segments).iter().enumerate() {
        out.push_str(&format!(
            "{}\n{} --> {}\n{}\n\n",
            number + 1,
            timestamp(segment.start, ','),
            timestamp(segment.end, ','),
            lines(&segment.text).join("\n")
        ));
    }
    out
}

/// A WebVTT file: the `WEBVTT` header, then `00:00:00.000 --> 00:00:01.500\nText\n\n` per
/// segment with text (`&`, `<` and `>` escaped, as cue text requires).
pub fn vtt(segments: &[TranscriptionSegment]) -> String {
    let mut out = String::from("WEBVTT\n\n");
    for segment in cues(segments) {
        let text = lines(&segment.text)
            .iter()
            .map(|line| escape_vtt(line))
            .collect::<Vec<_>>()
            .join("\n");
        out.push_str(&format!(
            "{} --> {}\n{text}\n\n",
            timestamp(segment.start, '.'),
            timestamp(segment.end, '.'),
        ));
    }
    out
}

/// The cues of the segments that have text (a cue cannot be empty), long ones split.
fn cues(segments: &[TranscriptionSegment]) -> Vec<TranscriptionSegment> {
    segments
        .iter()
        .filter(|s| !s.text.trim().is_empty())
        .flat_map(split_for_reading)
        .collect()
}

/// `segment` as cues of at most [`MAX_CUE_SECS`] and [`MAX_CUE_LINES`] lines (whole when it
/// fits). Also how segments of an engine that times only whole chunks are split.
pub fn split_for_reading(segment: &TranscriptionSegment) -> Vec<TranscriptionSegment> {
    let words: Vec<&str> = segment.text.split_whitespace().collect();
    let duration = (segment.end - segment.start).max(0.0);
    let fits = |words: &[&str], secs: f64| {
        secs <= MAX_CUE_SECS + 1e-9 && lines(&words.join(" ")).len() <= MAX_CUE_LINES
    };
    if fits(&words, duration) {
        return vec![segment.clone()];
    }
    // Where each word starts and ends, in characters of the text (a space after each word).
    let mut offsets = Vec::with_capacity(words.len() + 1);
    let mut at = 0;
    for word in &words {
        offsets.push(at);
        at += word.chars().count() + 1;
    }
    offsets.push(at);
    let secs_per_char = duration / at.max(1) as f64;
    let time_at = |word: usize| segment.start + offsets[word] as f64 * secs_per_char;
    let secs = |from: usize, to: usize| (offsets[to] - offsets[from]) as f64 * secs_per_char;

    let mut cues = Vec::new();
    let mut first = 0;
    let mut emit = |from: usize, to: usize, last: bool| {
        cues.push(TranscriptionSegment {
            start: round_ms(time_at(from)),
            end: if last {
                segment.end
            } else {
                round_ms(time_at(to))
            },
            text: words[from..to].join(" "),
        });
    };
    for next in 0..words.len() {
        // Close cues until the piece with word `next` fits (a lone word always does).
        while first < next && !fits(&words[first..=next], secs(first, next + 1)) {
            let cut = clause_end(&words[first..next]).map_or(next, |k| first + k);
            emit(first, cut, false);
            first = cut;
        }
    }
    emit(first, words.len(), true);
    cues
}

/// Where to cut `piece`: after its last word that ends a clause (`.`, `,`, `;`, `:`, `?`, `!`),
/// if that word is in the second half; the count of words kept.
fn clause_end(piece: &[&str]) -> Option<usize> {
    let ends_clause = |word: &&str| word.ends_with(['.', ',', ';', ':', '?', '!']);
    let last = piece.iter().rposition(ends_clause)?;
    (2 * (last + 1) >= piece.len()).then_some(last + 1)
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// `hh:mm:ss` and milliseconds after `separator`; hours grow past two digits if they must.
pub fn timestamp(seconds: f64, separator: char) -> String {
    let millis = (seconds.max(0.0) * 1000.0).round() as u64;
    let (h, m, s, ms) = (
        millis / 3_600_000,
        millis / 60_000 % 60,
        millis / 1000 % 60,
        millis % 1000,
    );
    format!("{h:02}:{m:02}:{s:02}{separator}{ms:03}")
}

/// The text's words on lines of at most [`LINE_WIDTH`] characters (line breaks and runs of
/// spaces in the text become single spaces, so no cue holds a blank line).
fn lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= LINE_WIDTH => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn escape_vtt(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(json: serde_json::Value) -> Vec<TranscriptionSegment> {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn srt_numbers_its_cues_and_times_them_with_commas() {
        let segments = segments(serde_json::json!([
            {"start": 0.0, "end": 1.5, "text": " Hello there."},
            {"start": 2.0, "end": 2.5, "text": "  "},
            {"start": 61.25, "end": 3725.001, "text": "Bye."}
        ]));
        assert_eq!(
            srt(&segments),
            "1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n\
             2\n00:01:01,250 --> 01:02:05,001\nBye.\n\n"
        );
    }

    #[test]
    fn vtt_has_its_header_dots_and_escaped_text() {
        let segments = segments(serde_json::json!([
            {"start": 0.0, "end": 1.5, "text": "Fish & chips --> <b>"},
        ]));
        assert_eq!(
            vtt(&segments),
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nFish &amp; chips --&gt; &lt;b&gt;\n\n"
        );
        assert_eq!(vtt(&[]), "WEBVTT\n\n");
    }

    #[test]
    fn long_text_is_broken_into_lines_no_cue_has_a_blank_line() {
        let text = "The quick brown fox jumps over the lazy dog and then\n\nruns far away \
                    into the forest, a supercalifragilisticexpialidociouslylongword here.";
        let broken = lines(text);
        assert!(broken.iter().all(|l| !l.is_empty()));
        for line in &broken {
            assert!(
                line.chars().count() <= LINE_WIDTH || !line.contains(' '),
                "{line:?}"
            );
        }
        assert_eq!(
            broken.join(" "),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        assert!(broken.len() >= 3, "{broken:?}");
    }

    #[test]
    fn a_long_segment_becomes_cues_of_at_most_seven_seconds_and_two_lines() {
        // What Whisper wrote for 28.8 s of speech when a prompt kept it in one segment.
        let text = "Please send the quarterly report to the finance team before Friday \
                    afternoon. The meeting moved to Tuesday, so we have more time to check \
                    the figures, the charts and the summary. After that, we can plan the next \
                    quarter and talk about hiring two more people for support.";
        let segments = segments(serde_json::json!([
            {"start": 1.2, "end": 30.0, "text": text},
            {"start": 31.0, "end": 32.0, "text": "Thanks."},
        ]));
        let cues = cues(&segments);
        assert!(cues.len() >= 6, "{cues:?}");
        for cue in &cues {
            assert!(cue.end - cue.start <= MAX_CUE_SECS + 1e-6, "{cue:?}");
            assert!(lines(&cue.text).len() <= MAX_CUE_LINES, "{cue:?}");
        }
        // Nothing lost or reordered; the times run on from the first cue to the last.
        let joined: Vec<&str> = cues.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(joined.join(" "), format!("{text} Thanks."));
        assert_eq!(cues[0].start, 1.2);
        for pair in cues.windows(2) {
            assert!(pair[0].end <= pair[1].start + 1e-9, "{pair:?}");
        }
        assert_eq!(cues[cues.len() - 2].end, 30.0);
        // Cut after a clause where one is in the second half of a cue.
        let at_clauses = cues[..cues.len() - 2]
            .iter()
            .filter(|c| c.text.ends_with(['.', ',']))
            .count();
        assert!(at_clauses >= 2, "{cues:?}");
        let srt = srt(&segments);
        assert!(srt.starts_with("1\n00:00:01,200 --> "), "{srt}");
    }

    #[test]
    fn short_segments_stay_whole() {
        let segments = segments(serde_json::json!([
            {"start": 0.0, "end": 6.9, "text": "A short line of speech."},
        ]));
        assert_eq!(cues(&segments), segments);
    }
}
