//! Timed words and decoder figures, engine-neutral: a segment's words assembled from its decoded
//! tokens (a token that starts with a space begins a word), their times kept in order and inside
//! the segment; words after silence started where the speech does, words next to a pause cut to
//! a typical length; words spread over a segment by
//! their length when no times are known; and the compression ratio of a text as OpenAI's whisper
//! computes it.

use miniz_oxide::deflate::core::{
    CompressionStrategy, CompressorOxide, TDEFLFlush, TDEFLStatus, compress,
    create_comp_flags_from_zip_params,
};

use super::{Segment, Word};

/// One decoded token of a segment.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedToken {
    pub id: i32,
    /// Its text as bytes: a multi-byte character may be split between two tokens.
    pub bytes: Vec<u8>,
    /// When it was said (seconds, in the segment's timeline); None when unknown.
    pub start: Option<f64>,
    pub end: Option<f64>,
}

/// The words of a segment from `start` to `end`, assembled from its `tokens`.
///
/// Tokens with an id at or above `first_special` (whisper's end-of-text token, after which come
/// the special and timestamp tokens) are skipped. A text token whose text starts with a space
/// begins a new word; any other (punctuation included) joins the word before. A word's bytes are
/// joined before they are decoded, so a character split between tokens comes out whole; words
/// are trimmed and empty ones dropped. A word runs from its first token's start to its last
/// token's end; times never go back, never leave the segment, and a word never ends before it
/// starts. When any word has no time, every word is spread over the segment ([`spread`]).
pub fn assemble(tokens: &[TimedToken], first_special: i32, start: f64, end: f64) -> Vec<Word> {
    let mut pieces: Vec<(Vec<u8>, Option<f64>, Option<f64>)> = Vec::new();
    for token in tokens.iter().filter(|t| t.id < first_special) {
        match pieces.last_mut() {
            Some((bytes, _, word_end)) if !token.bytes.starts_with(b" ") => {
                bytes.extend_from_slice(&token.bytes);
                *word_end = token.end;
            }
            _ => pieces.push((token.bytes.clone(), token.start, token.end)),
        }
    }
    let words: Vec<(String, Option<f64>, Option<f64>)> = pieces
        .into_iter()
        .map(|(bytes, s, e)| (String::from_utf8_lossy(&bytes).trim().to_string(), s, e))
        .filter(|(word, _, _)| !word.is_empty())
        .collect();
    if words.iter().any(|(_, s, e)| s.is_none() || e.is_none()) {
        let text: Vec<&str> = words.iter().map(|(w, _, _)| w.as_str()).collect();
        return spread(&text.join(" "), start, end);
    }
    let end = end.max(start);
    let mut floor = start;
    words
        .into_iter()
        .map(|(word, s, e)| {
            let word_start = clamp(s.unwrap_or(floor), floor, end);
            let word_end = clamp(e.unwrap_or(word_start), word_start, end);
            floor = word_end;
            Word {
                word,
                start: word_start,
                end: word_end,
            }
        })
        .collect()
}

/// Samples per second of the audio the engines take.
const SAMPLE_RATE: f64 = 16_000.0;
/// The frames in which the signal's loudness is measured (20 ms, as whisper's encoder steps).
const FRAME_SECONDS: f64 = 0.02;
/// A frame this loud relative to the loudest of a word's span is its speech.
const ONSET_SHARE: f32 = 0.2;

/// The first word of each segment starts where its speech does: the alignment gives no moment
/// for the start of a word after silence, and may start it early. Its start moves forward to
/// the first 20 ms frame at least a fifth as loud as the loudest of the word's span, never past
/// its last frame. `samples`: the 16 kHz audio the segments are timed in.
pub fn start_words_at_speech(segments: &mut [Segment], samples: &[f32]) {
    for word in segments.iter_mut().filter_map(|s| s.words.first_mut()) {
        if let Some(onset) = speech_onset(samples, word.start, word.end) {
            word.start = onset.max(word.start);
        }
    }
}

/// Where speech starts between `from` and `to` (seconds) in `samples`; None where the span is
/// silent or shorter than a frame.
fn speech_onset(samples: &[f32], from: f64, to: f64) -> Option<f64> {
    let frame = (FRAME_SECONDS * SAMPLE_RATE) as usize;
    let index = |seconds: f64| ((seconds.max(0.0) * SAMPLE_RATE) as usize).min(samples.len());
    let (first, last) = (index(from), index(to));
    let loudness: Vec<f32> = samples[first..last]
        .chunks_exact(frame)
        .map(|f| (f.iter().map(|s| s * s).sum::<f32>() / frame as f32).sqrt())
        .collect();
    let loudest = loudness.iter().copied().fold(0.0, f32::max);
    if loudest < 1e-4 {
        return None;
    }
    let at = loudness.iter().position(|&l| l >= loudest * ONSET_SHARE)?;
    Some((first + at * frame) as f64 / SAMPLE_RATE)
}

/// OpenAI's whisper's bound on the median word when it cuts words next to a pause (seconds).
const MEDIAN_WORD_AT_MOST: f64 = 0.7;

/// Words next to a pause, which alignment stretches over it, cut to twice the median word of
/// `segments` (the median counted as at most 0.7 s), as OpenAI's whisper does: the first word of
/// a segment and a word after a sentence's end lose their beginning, a word that ends a sentence
/// loses its end.
pub fn shorten_words_at_pauses(segments: &mut [Segment]) {
    let mut durations: Vec<f64> = segments
        .iter()
        .flat_map(|s| &s.words)
        .map(|w| w.end - w.start)
        .collect();
    if durations.is_empty() {
        return;
    }
    durations.sort_by(f64::total_cmp);
    let middle = durations.len() / 2;
    let median = if durations.len().is_multiple_of(2) {
        (durations[middle - 1] + durations[middle]) / 2.0
    } else {
        durations[middle]
    };
    let longest = 2.0 * median.min(MEDIAN_WORD_AT_MOST);
    if longest <= 0.0 {
        return;
    }
    for segment in segments {
        let mut after_sentence = true;
        for word in &mut segment.words {
            if word.end - word.start > longest {
                if after_sentence {
                    word.start = word.end - longest;
                } else if ends_sentence(&word.word) {
                    word.end = word.start + longest;
                }
            }
            after_sentence = ends_sentence(&word.word);
        }
    }
}

/// Whether `word` ends a sentence.
fn ends_sentence(word: &str) -> bool {
    word.ends_with(['.', '!', '?', '。', '！', '？'])
}

/// `value` within `low..=high`; `low` for a value that is not a number.
fn clamp(value: f64, low: f64, high: f64) -> f64 {
    if value.is_nan() {
        low
    } else {
        value.max(low).min(high)
    }
}

/// The words of `text` (split at whitespace) spread over `start..end`, one after another, each
/// given time in proportion to its characters: an approximation for text without word times.
pub fn spread(text: &str, start: f64, end: f64) -> Vec<Word> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let total: usize = words.iter().map(|w| w.chars().count()).sum();
    let span = (end - start).max(0.0);
    let mut said = 0;
    words
        .into_iter()
        .map(|word| {
            let at = |chars: usize| start + span * chars as f64 / total.max(1) as f64;
            let word_start = at(said);
            said += word.chars().count();
            Word {
                word: word.to_string(),
                start: word_start,
                end: at(said),
            }
        })
        .collect()
}

/// The length of `text` in bytes over the length of its zlib-compressed form at level 6, as
/// OpenAI's whisper computes it with Python's `zlib.compress`: text that repeats itself shows a
/// high ratio (OpenAI's decoder takes above 2.4 as a failed decode). Like zlib, the shorter of a
/// dynamic and a fixed Huffman block is taken (miniz alone would always pick the dynamic block,
/// whose tables weigh heavily on short repetitive text).
pub fn compression_ratio(text: &str) -> f64 {
    let bytes = text.as_bytes();
    let compressed = [CompressionStrategy::Default, CompressionStrategy::Fixed]
        .into_iter()
        .filter_map(|strategy| zlib_length(bytes, strategy))
        .min()
        // A stored block: zlib's header, the block's header and length, the checksum.
        .unwrap_or(bytes.len() + 11);
    bytes.len() as f64 / compressed as f64
}

/// The length of `bytes` compressed to zlib's format at level 6 with `strategy`.
fn zlib_length(bytes: &[u8], strategy: CompressionStrategy) -> Option<usize> {
    let flags = create_comp_flags_from_zip_params(6, 1, strategy as i32);
    let mut compressor = CompressorOxide::new(flags);
    // More than any block can take: miniz falls back to a stored block when compression grows.
    let mut output = vec![0; bytes.len() * 2 + 64];
    let (status, _, written) = compress(&mut compressor, bytes, &mut output, TDEFLFlush::Finish);
    (status == TDEFLStatus::Done).then_some(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EOT: i32 = 50256;

    fn token(id: i32, text: &[u8], start: f64, end: f64) -> TimedToken {
        TimedToken {
            id,
            bytes: text.to_vec(),
            start: Some(start),
            end: Some(end),
        }
    }

    fn text(id: i32, text: &str, start: f64, end: f64) -> TimedToken {
        token(id, text.as_bytes(), start, end)
    }

    fn shown(words: &[Word]) -> Vec<(&str, f64, f64)> {
        words
            .iter()
            .map(|w| (w.word.as_str(), w.start, w.end))
            .collect()
    }

    #[test]
    fn a_leading_space_begins_a_word_and_punctuation_joins_the_word_before() {
        let tokens = [
            text(EOT + 1, "[_BEG_]", 0.0, 0.0),
            text(10, " Hello", 0.5, 0.9),
            text(11, ",", 0.9, 1.0),
            text(12, " Sio", 1.2, 1.4),
            text(13, "bh", 1.4, 1.5),
            text(14, "an", 1.5, 1.8),
            text(15, ".", 1.8, 1.9),
            text(EOT + 70, "[_TT_70]", 2.0, 2.0),
            text(EOT, "[_EOT_]", 2.0, 2.0),
        ];
        let words = assemble(&tokens, EOT, 0.0, 2.0);
        assert_eq!(
            shown(&words),
            [("Hello,", 0.5, 1.0), ("Siobhan.", 1.2, 1.9)]
        );
    }

    #[test]
    fn a_character_split_between_tokens_is_joined_before_decoding() {
        // "schön" with its ö (0xC3 0xB6) cut between two tokens, and "très" likewise.
        let tokens = [
            token(1, b" sch\xC3", 0.0, 0.2),
            token(2, b"\xB6n", 0.2, 0.4),
            token(3, b" tr\xC3", 0.5, 0.6),
            token(4, b"\xA8s", 0.6, 0.8),
        ];
        let words = assemble(&tokens, EOT, 0.0, 1.0);
        assert_eq!(shown(&words), [("schön", 0.0, 0.4), ("très", 0.5, 0.8)]);
    }

    #[test]
    fn words_are_trimmed_and_blank_ones_dropped() {
        let tokens = [
            text(1, "Well", 0.0, 0.3),
            text(2, "  ", 0.3, 0.4),
            text(3, " done ", 0.4, 0.8),
        ];
        let words = assemble(&tokens, EOT, 0.0, 1.0);
        assert_eq!(shown(&words), [("Well", 0.0, 0.3), ("done", 0.4, 0.8)]);
    }

    #[test]
    fn times_never_go_back_and_stay_inside_the_segment() {
        let tokens = [
            text(1, " early", 0.5, 1.5),
            text(2, " back", 1.0, 1.2),
            text(3, " inverted", 2.0, 1.8),
            text(4, " late", 3.5, 4.5),
            text(5, " nan", f64::NAN, f64::NAN),
        ];
        let words = assemble(&tokens, EOT, 1.0, 3.0);
        assert_eq!(
            shown(&words),
            [
                ("early", 1.0, 1.5),
                ("back", 1.5, 1.5),
                ("inverted", 2.0, 2.0),
                ("late", 3.0, 3.0),
                ("nan", 3.0, 3.0),
            ]
        );
    }

    #[test]
    fn words_stretched_over_a_pause_are_cut_to_twice_the_median_word() {
        let word = |word: &str, start: f64, end: f64| Word {
            word: word.into(),
            start,
            end,
        };
        let mut segments = vec![
            Segment {
                words: vec![
                    word("Please", 0.0, 2.0),
                    word("send", 2.0, 2.3),
                    word("it", 2.3, 2.6),
                    word("to", 2.6, 2.9),
                    word("them", 2.9, 3.2),
                    word("today.", 3.2, 4.8),
                    word("Thanks", 4.8, 6.3),
                ],
                ..Segment::new(0.0, 6.3, "Please send it to them today. Thanks")
            },
            Segment {
                words: vec![
                    word("We", 7.0, 7.3),
                    word("left", 7.3, 8.5),
                    word("early", 8.5, 8.8),
                ],
                ..Segment::new(7.0, 8.8, "We left early")
            },
        ];
        shorten_words_at_pauses(&mut segments);
        // The median word lasts 0.3 s: longer than 0.6 s is cut on the side of the pause.
        let rounded = |s: &Segment| -> Vec<(String, f64, f64)> {
            let round = |t: f64| (t * 1000.0).round() / 1000.0;
            s.words
                .iter()
                .map(|w| (w.word.clone(), round(w.start), round(w.end)))
                .collect()
        };
        let expected = |words: &[(&str, f64, f64)]| -> Vec<(String, f64, f64)> {
            words
                .iter()
                .map(|&(w, s, e)| (w.to_string(), s, e))
                .collect()
        };
        assert_eq!(
            rounded(&segments[0]),
            expected(&[
                ("Please", 1.4, 2.0),
                ("send", 2.0, 2.3),
                ("it", 2.3, 2.6),
                ("to", 2.6, 2.9),
                ("them", 2.9, 3.2),
                ("today.", 3.2, 3.8),
                ("Thanks", 5.7, 6.3),
            ])
        );
        // Inside a sentence, a long word stays as aligned.
        assert_eq!(
            rounded(&segments[1]),
            expected(&[("We", 7.0, 7.3), ("left", 7.3, 8.5), ("early", 8.5, 8.8)])
        );
    }

    #[test]
    fn the_first_word_of_a_segment_starts_where_its_speech_does() {
        // Silence, then a tone from 1.0 s to 1.5 s, quiet noise before it from 0.5 s.
        let mut samples = vec![0.0f32; 32_000];
        for (n, sample) in samples.iter_mut().enumerate().take(24_000).skip(8_000) {
            *sample = if n < 16_000 { 0.01 } else { 0.3 } * (n as f32 * 0.1).sin();
        }
        let word = |start: f64, end: f64| Word {
            word: "word".into(),
            start,
            end,
        };
        let mut segments = vec![
            Segment {
                words: vec![word(0.2, 1.3), word(1.3, 1.5)],
                ..Segment::default()
            },
            // All silence, or already at its speech: left alone.
            Segment {
                words: vec![word(1.6, 1.9)],
                ..Segment::default()
            },
            Segment {
                words: vec![word(1.0, 1.4)],
                ..Segment::default()
            },
            Segment::default(),
        ];
        start_words_at_speech(&mut segments, &samples);
        assert_eq!(
            shown(&segments[0].words),
            [("word", 1.0, 1.3), ("word", 1.3, 1.5)]
        );
        assert_eq!(shown(&segments[1].words), [("word", 1.6, 1.9)]);
        assert_eq!(shown(&segments[2].words), [("word", 1.0, 1.4)]);
        // Past the audio's end, nothing to hear.
        let mut beyond = vec![Segment {
            words: vec![word(3.0, 4.0)],
            ..Segment::default()
        }];
        start_words_at_speech(&mut beyond, &samples);
        assert_eq!(shown(&beyond[0].words), [("word", 3.0, 4.0)]);
    }

    #[test]
    fn words_without_times_are_spread_over_the_segment() {
        let mut tokens = vec![text(1, " ab", 0.0, 0.1), text(2, " cd", 0.1, 0.2)];
        tokens[1].start = None;
        let words = assemble(&tokens, EOT, 2.0, 4.0);
        assert_eq!(shown(&words), [("ab", 2.0, 3.0), ("cd", 3.0, 4.0)]);
        assert!(assemble(&[], EOT, 0.0, 1.0).is_empty());
    }

    #[test]
    fn spread_words_take_time_in_proportion_to_their_characters() {
        let words = spread("  I  said héllo  ", 10.0, 20.0);
        assert_eq!(
            shown(&words),
            [
                ("I", 10.0, 11.0),
                ("said", 11.0, 15.0),
                ("héllo", 15.0, 20.0)
            ]
        );
        // A segment whose end comes before its start gives words of no length.
        let words = spread("a b", 5.0, 4.0);
        assert_eq!(shown(&words), [("a", 5.0, 5.0), ("b", 5.0, 5.0)]);
        assert!(spread(" ", 0.0, 1.0).is_empty());
    }

    #[test]
    fn compression_ratio_matches_pythons_zlib_and_is_high_for_repetition() {
        // Python's zlib.compress (OpenAI's whisper) gives: 58 bytes to 65, 320 to 29, 51 to 15,
        // empty text to 8 (a header and a checksum), 4 to 12. miniz's dynamic block comes out
        // a few bytes shorter than zlib's on some texts.
        let speech = "Please send the quarterly report to Siobhan before Friday.";
        let ratio = compression_ratio(speech);
        assert!((58.0 / 65.0..1.0).contains(&ratio), "{ratio}");
        let looping = "We're not here. ".repeat(20);
        assert_eq!(compression_ratio(&looping), 320.0 / 29.0);
        let the = "the the the the the the the the the the the the the";
        assert_eq!(compression_ratio(the), 51.0 / 15.0);
        assert_eq!(compression_ratio(""), 0.0);
        assert_eq!(compression_ratio("aaaa"), 4.0 / 12.0);
        // Bytes that do not compress come out in a stored block, never a larger one.
        let varied: String = (0..300u32)
            .filter_map(|n| char::from_u32(0x4E00 + n * 7))
            .collect();
        assert!(
            compression_ratio(&varied) > 0.9,
            "{}",
            compression_ratio(&varied)
        );
    }
}
