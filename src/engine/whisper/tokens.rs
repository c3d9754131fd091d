//! A segment read from whisper.cpp's decoder: its text tokens, the decoder's figures for it and,
//! when asked, its timed words. Tokens are timed by DTW when the context aligns them (each
//! moment ends one token and starts the next), else by whisper.cpp's token timestamps.

use whisper_rs::WhisperSegment;

use super::super::words::{TimedToken, assemble, compression_ratio};
use super::super::{EngineError, Segment, SegmentDetail};

/// How the segments of a decode are read.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    /// whisper's end-of-text token: text tokens come before it, special and timestamp tokens
    /// from it on.
    pub first_special: i32,
    /// The decode's sampling temperature.
    pub temperature: f32,
    /// Time the words (the decode ran with token timestamps).
    pub words: bool,
}

/// One token as whisper.cpp reports it; times in centiseconds of the decoded audio, -1 when
/// not computed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawToken {
    pub id: i32,
    pub bytes: Vec<u8>,
    pub plog: f32,
    /// Token timestamps (`token_timestamps`): from the timestamp tokens' probabilities, the
    /// text's length and the signal's energy.
    pub t0: i64,
    pub t1: i64,
    /// When the DTW alignment path reaches the token (contexts with alignment heads).
    pub t_dtw: i64,
}

/// Reads the segments of one decode, in order: a DTW moment ends one token and starts the next,
/// from one segment to the next.
pub(super) struct Reader<'a> {
    reading: &'a Reading,
    /// The moment of the last text token read.
    previous_end: Option<f64>,
    /// Text tokens at the decode's start still to leave out: text said before, which the
    /// decoder was made to read (see [`super::run::Said`]).
    skip: usize,
}

impl<'a> Reader<'a> {
    pub fn new(reading: &'a Reading) -> Reader<'a> {
        Reader {
            reading,
            previous_end: None,
            skip: 0,
        }
    }

    /// The reader of a decode whose first `tokens` text tokens are left out: their segment
    /// reads the text after them (a segment of them alone reads as empty).
    pub fn skipping(self, tokens: usize) -> Reader<'a> {
        Reader {
            skip: tokens,
            ..self
        }
    }

    /// The next segment of the decode, `segment`, with its text `text`, times in seconds of the
    /// decoded audio.
    pub fn read(
        &mut self,
        segment: &WhisperSegment<'_>,
        text: String,
    ) -> Result<Segment, EngineError> {
        let mut tokens = raw_tokens(segment)?;
        let start = segment.start_timestamp() as f64 / 100.0;
        let end = segment.end_timestamp() as f64 / 100.0;
        let reading = self.reading;
        let text = if self.skip > 0 {
            let said = left_out(&mut tokens, reading.first_special, &mut self.skip);
            // The moment the text said before ends is where the first token after it starts.
            if let Some(moment) = said
                .iter()
                .rev()
                .find_map(|t| (t.t_dtw >= 0).then_some(t.t_dtw))
            {
                self.previous_end = Some(moment as f64 / 100.0);
            }
            text_of(&tokens, reading.first_special)
        } else {
            text
        };
        let timed = timed(
            &tokens,
            reading.first_special,
            start,
            &mut self.previous_end,
        );
        let words = if reading.words {
            assemble(&timed, reading.first_special, start, end)
        } else {
            Vec::new()
        };
        let detail = detail(&tokens, &text, segment.no_speech_probability(), reading);
        Ok(Segment {
            start,
            end,
            text,
            words,
            detail: Some(detail),
        })
    }
}

/// Takes the first `skip` text tokens (and the special tokens among and before them) out of
/// `tokens`, counting `skip` down, and after them the marks that close the text said before
/// (a "." or "?" with no space in front, which the decoder adds to it); returns them.
fn left_out(tokens: &mut Vec<RawToken>, first_special: i32, skip: &mut usize) -> Vec<RawToken> {
    if *skip == 0 {
        return Vec::new();
    }
    let mut taken = 0;
    while taken < tokens.len() && *skip > 0 {
        if tokens[taken].id < first_special {
            *skip -= 1;
        }
        taken += 1;
    }
    while taken < tokens.len() && *skip == 0 && closes_a_sentence(&tokens[taken], first_special) {
        taken += 1;
    }
    tokens.drain(..taken).collect()
}

/// A text token of marks alone, written without a space before it.
fn closes_a_sentence(token: &RawToken, first_special: i32) -> bool {
    token.id < first_special
        && !token.bytes.is_empty()
        && token.bytes.iter().all(|b| b.is_ascii_punctuation())
}

/// The text of `tokens`' text tokens, trimmed.
fn text_of(tokens: &[RawToken], first_special: i32) -> String {
    let bytes: Vec<u8> = tokens
        .iter()
        .filter(|t| t.id < first_special)
        .flat_map(|t| t.bytes.iter().copied())
        .collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The tokens of `segment` as whisper.cpp reports them.
fn raw_tokens(segment: &WhisperSegment<'_>) -> Result<Vec<RawToken>, EngineError> {
    let failed = |e: whisper_rs::WhisperError| EngineError::Failed(e.to_string());
    let mut tokens = Vec::with_capacity(segment.n_tokens().max(0) as usize);
    for index in 0..segment.n_tokens() {
        let Some(token) = segment.get_token(index) else {
            continue;
        };
        let data = token.token_data();
        tokens.push(RawToken {
            id: data.id,
            bytes: token.to_bytes().map_err(failed)?.to_vec(),
            plog: data.plog,
            t0: data.t0,
            t1: data.t1,
            t_dtw: data.t_dtw,
        });
    }
    Ok(tokens)
}

/// The decoder's figures for a segment of `tokens` reading `text`.
fn detail(
    tokens: &[RawToken],
    text: &str,
    no_speech_prob: f32,
    reading: &Reading,
) -> SegmentDetail {
    let text_tokens: Vec<&RawToken> = tokens
        .iter()
        .filter(|t| t.id < reading.first_special)
        .collect();
    let avg_logprob = if text_tokens.is_empty() {
        0.0
    } else {
        text_tokens.iter().map(|t| f64::from(t.plog)).sum::<f64>() / text_tokens.len() as f64
    };
    SegmentDetail {
        tokens: text_tokens.iter().map(|t| t.id).collect(),
        avg_logprob,
        no_speech_prob: f64::from(no_speech_prob).clamp(0.0, 1.0),
        temperature: f64::from(reading.temperature),
        compression_ratio: compression_ratio(text),
    }
}

/// The tokens of a segment from `start` (seconds) with their times in seconds; `previous_end`:
/// the DTW moment of the decode's text token before them, updated.
///
/// With DTW (every text token has a moment): whisper.cpp gives each token the moment the
/// alignment path reaches the decoder position it was read in, which is where the token after
/// it is predicted: that moment is the token's end, and the start of the token after it
/// (OpenAI's whisper times words the same way). The decode's first token starts at its token
/// timestamp (where the signal's energy rises), else at its segment's start. Without DTW, the
/// token timestamps; None where whisper.cpp computed neither.
pub(super) fn timed(
    tokens: &[RawToken],
    first_special: i32,
    start: f64,
    previous_end: &mut Option<f64>,
) -> Vec<TimedToken> {
    let seconds = |centiseconds: i64| (centiseconds >= 0).then(|| centiseconds as f64 / 100.0);
    let is_text = |t: &RawToken| t.id < first_special;
    let aligned = tokens.iter().filter(|t| is_text(t)).all(|t| t.t_dtw >= 0);
    tokens
        .iter()
        .map(|token| {
            let (token_start, token_end) = if !is_text(token) {
                (None, None)
            } else if aligned {
                let end = seconds(token.t_dtw);
                let begin = previous_end.or_else(|| seconds(token.t0)).unwrap_or(start);
                *previous_end = end;
                (Some(begin), end)
            } else {
                (seconds(token.t0), seconds(token.t1))
            };
            TimedToken {
                id: token.id,
                bytes: token.bytes.clone(),
                start: token_start,
                end: token_end,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EOT: i32 = 50256;

    fn raw(id: i32, text: &str, t0: i64, t1: i64, t_dtw: i64) -> RawToken {
        RawToken {
            id,
            bytes: text.as_bytes().to_vec(),
            plog: -0.1,
            t0,
            t1,
            t_dtw,
        }
    }

    /// The tokens as the first segment of a decode.
    fn first(tokens: &[RawToken], start: f64) -> Vec<TimedToken> {
        timed(tokens, EOT, start, &mut None)
    }

    fn times(tokens: &[TimedToken]) -> Vec<(Option<f64>, Option<f64>)> {
        tokens.iter().map(|t| (t.start, t.end)).collect()
    }

    #[test]
    fn an_aligned_token_ends_at_its_moment_and_the_next_starts_there() {
        let tokens = [
            raw(EOT + 1, "[_BEG_]", 0, 0, -1),
            raw(1, " Hello", 10, 60, 40),
            raw(2, ",", 60, 70, 72),
            raw(3, " world", 80, 150, 140),
            raw(EOT + 80, "[_TT_80]", 160, 160, -1),
        ];
        assert_eq!(
            times(&first(&tokens, 0.05)),
            [
                (None, None),
                (Some(0.1), Some(0.4)),
                (Some(0.4), Some(0.72)),
                (Some(0.72), Some(1.4)),
                (None, None),
            ]
        );
        // Without a token timestamp, the first token starts with the segment.
        let mut untimed = tokens.clone();
        untimed[1].t0 = -1;
        assert_eq!(first(&untimed, 0.05)[1].start, Some(0.05));
    }

    #[test]
    fn the_moment_of_a_segments_last_token_starts_the_next_segment() {
        let mut previous_end = None;
        let one = [raw(1, " Friday", 300, 370, 408), raw(2, ".", 370, 390, 640)];
        let two = [
            raw(3, " We", 400, 415, 662),
            raw(4, " deployed", 435, 477, 702),
        ];
        timed(&one, EOT, 0.0, &mut previous_end);
        assert_eq!(previous_end, Some(6.4));
        // The token timestamps put "We" in the silence before it; the alignment does not.
        assert_eq!(
            times(&timed(&two, EOT, 4.0, &mut previous_end)),
            [(Some(6.4), Some(6.62)), (Some(6.62), Some(7.02))]
        );
    }

    #[test]
    fn text_said_before_is_left_out_of_the_segments_that_hold_it() {
        let mut skip = 3;
        // <|0.00|> " ten of" <|1.00|>: two text tokens, both left out.
        let mut first = vec![
            raw(EOT + 1, "[_BEG_]", 0, 0, -1),
            raw(1, " ten", 0, 0, 20),
            raw(2, " of", 0, 0, 40),
            raw(EOT + 51, "[_TT_50]", 0, 0, -1),
        ];
        let said = left_out(&mut first, EOT, &mut skip);
        assert_eq!(said.len(), 4);
        assert_eq!(text_of(&first, EOT), "");
        assert_eq!(skip, 1);
        // " clubs" ends what was said before; " four queen" comes after it.
        let mut second = vec![
            raw(EOT + 51, "[_TT_50]", 0, 0, -1),
            raw(3, " clubs", 0, 0, 60),
            raw(4, " four", 0, 0, 80),
            raw(5, " queen", 0, 0, 100),
        ];
        left_out(&mut second, EOT, &mut skip);
        assert_eq!(skip, 0);
        assert_eq!(text_of(&second, EOT), "four queen");
        // The mark that closes the text said before is left out with it.
        let (mut skip, mut closed) = (1, vec![raw(7, " hearts", 0, 0, 20), raw(8, ".", 0, 0, 30)]);
        closed.push(raw(9, " five", 0, 0, 50));
        left_out(&mut closed, EOT, &mut skip);
        assert_eq!(text_of(&closed, EOT), "five");
        // Nothing left to skip: nothing taken.
        let mut third = vec![raw(6, " of", 0, 0, 120)];
        assert!(left_out(&mut third, EOT, &mut skip).is_empty());
        assert_eq!(text_of(&third, EOT), "of");
    }

    #[test]
    fn tokens_without_a_dtw_moment_keep_their_token_timestamps() {
        let tokens = [raw(1, " Hello", 10, 60, 40), raw(2, " world", 80, 150, -1)];
        assert_eq!(
            times(&first(&tokens, 0.0)),
            [(Some(0.1), Some(0.6)), (Some(0.8), Some(1.5))]
        );
        let untimed = [raw(1, " Hello", -1, -1, -1)];
        assert_eq!(times(&first(&untimed, 0.0)), [(None, None)]);
    }
}
