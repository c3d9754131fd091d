//! Subtitle files from timed segments: SubRip (`.srt`) and WebVTT (`.vtt`), as the OpenAI-compatible
//! routes and `verbatim transcribe --format srt|vtt` write them. Cues are numbered from 1 (SRT),
//! separated by a blank line, their text on lines of at most [`LINE_WIDTH`] characters.

use super::transcription::TranscriptionSegment;

/// The longest subtitle line, in characters (the usual broadcast limit); a longer word keeps
/// its own line.
pub const LINE_WIDTH: usize = 42;

/// A SubRip file: `1\n00:00:00,000 --> 00:00:01,500\nText\n\n` per segment with text.
pub fn srt(segments: &[TranscriptionSegment]) -> String {
    let mut out = String::new();
    for (number, segment) in cues(segments).enumerate() {
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

/// The segments that have text (a cue cannot be empty).
fn cues(segments: &[TranscriptionSegment]) -> impl Iterator<Item = &TranscriptionSegment> {
    segments.iter().filter(|s| !s.text.trim().is_empty())
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
}
