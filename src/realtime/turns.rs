//! A realtime session's input audio: PCM16 as the client sends it, resampled to 16 kHz and cut
//! into turns (conversation items) by voice activity detection (`server_vad`, the live limits
//! of dictation with the client's threshold, padding and silence) or by the client's commits.
//! Blocking work (resampling and detection cost CPU): the session runs it off the async runtime.
//! Memory is bounded whatever the client sends: with detection, about one chunk (at most
//! [`LONGEST_TURN_SECONDS`]); without, [`MAX_TURN_SECONDS`] of uncommitted audio.

use std::ops::Range;

use crate::audio::resample::{StreamingResampler, TARGET_RATE};
use crate::audio::vad::chunks::Limits;
use crate::audio::vad::{Chunker, FRAME};

#[cfg(test)]
use super::detection::LONGEST_TURN_SECONDS;
use super::detection::TurnDetection;

/// Samples per second of the audio turns are cut from.
const RATE: usize = TARGET_RATE as usize;
/// The most audio a turn the client commits may hold (2 minutes); an append past it is refused.
pub const MAX_TURN_SECONDS: usize = 120;
/// A commit needs at least this much audio (100 ms, as OpenAI's server asks).
const MIN_COMMIT_SAMPLES: usize = RATE / 10;

/// A turn in a pause that may end it is given to be heard ahead ([`Turns::ahead`]) at least
/// this long before the pause would commit it, and as long as the session's last turn took to
/// be heard ([`Turns::hear_ahead_by`]): about what a turn takes to be heard (tiny.en on 2
/// cores: 0.22 s, the median from commit to text). Given as soon as the pause began, with 20
/// sessions at once, the engine did 64 % more work, most of it on pauses the voice ended;
/// given 0.3 s before the commit (0.18 s into the default pause), 25-30 % more, for nearly the
/// same gain: text 0.66 s behind its audio (median) instead of 0.80 s (`scripts/bench-realtime
/// --sessions 20`, docs/performance.md).
const AHEAD_OF_COMMIT_SECONDS: f64 = 0.3;

/// A turn, settled: its audio (16 kHz mono) and where it lies in the session's audio.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub item_id: String,
    pub previous_item_id: Option<String>,
    pub samples: Vec<f32>,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// What the audio brought, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    SpeechStarted {
        item_id: String,
        audio_start_ms: u64,
    },
    SpeechStopped {
        item_id: String,
        audio_end_ms: u64,
    },
    Committed(Turn),
}

/// The open turn as it would be committed if no more speech came ([`Turns::ahead`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Ahead {
    /// In a pause that may end the turn, shortly before it would: the turn's samples, as its
    /// commit would hold them.
    Settling(Vec<f32>),
    /// No turn is settling now: the voice came back, or the turn was committed.
    Nothing,
}

/// What the client asked that the audio cannot give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TurnError {
    #[error(
        "the input audio buffer holds more than {MAX_TURN_SECONDS} s; commit it (input_audio_buffer.commit) before appending more"
    )]
    BufferFull,
    #[error("nothing to commit: the input audio buffer holds less than 100 ms of audio")]
    TooShort,
    #[error("nothing to commit: no speech since the last turn")]
    NoSpeech,
}

enum Mode {
    /// The client commits: the audio since the last commit, from `start` on.
    Manual { buffer: Vec<f32>, start: usize },
    /// Voice activity detection within `limits`; the chunker's positions count from `base`.
    Detected {
        chunker: Box<Chunker>,
        base: usize,
        limits: Limits,
    },
}

/// A session's input audio (see the module documentation).
pub struct Turns {
    rate: u32,
    resampler: StreamingResampler,
    mode: Mode,
    /// 16 kHz samples heard since the session began.
    heard: usize,
    /// The turn whose speech was announced and is not yet committed.
    open_item: Option<String>,
    last_item: Option<String>,
    /// Where the turn [`Turns::ahead`] last gave lies (samples since the session began).
    settling: Option<Range<usize>>,
    /// How long before its commit a turn is given ahead (samples).
    ahead_by: usize,
}

impl Turns {
    /// Audio at `rate` (Hz), cut by `detection` (None: by the client's commits).
    pub fn new(rate: u32, detection: Option<TurnDetection>) -> Turns {
        let mut turns = Turns {
            rate,
            resampler: StreamingResampler::new(rate),
            mode: Mode::Manual {
                buffer: Vec::new(),
                start: 0,
            },
            heard: 0,
            open_item: None,
            last_item: None,
            settling: None,
            ahead_by: (AHEAD_OF_COMMIT_SECONDS * RATE as f64) as usize,
        };
        // Nothing is heard yet, so nothing comes of it.
        let _ = turns.set_detection(detection);
        turns
    }

    /// Takes PCM16 samples at the session's rate.
    pub fn append(&mut self, pcm: &[i16]) -> Result<Vec<Heard>, TurnError> {
        if let Mode::Manual { buffer, .. } = &self.mode {
            let coming = pcm.len() * RATE / self.rate as usize;
            if buffer.len() + coming > MAX_TURN_SECONDS * RATE {
                return Err(TurnError::BufferFull);
            }
        }
        let samples: Vec<f32> = pcm.iter().map(|&s| f32::from(s) / 32_768.0).collect();
        self.resampler.push(&samples);
        let resampled = self.resampler.take_output();
        Ok(self.hear(&resampled))
    }

    /// The client commits: everything since the last turn (without detection), or the speech
    /// begun and not yet settled (with it). Gives what the audio held back brought first.
    pub fn commit(&mut self) -> Result<Vec<Heard>, TurnError> {
        let mut heard = self.flush();
        let turn = match &mut self.mode {
            Mode::Manual { buffer, start } => {
                if buffer.len() < MIN_COMMIT_SAMPLES {
                    return Err(TurnError::TooShort);
                }
                let samples = std::mem::take(buffer);
                let from = std::mem::replace(start, self.heard);
                (from, samples)
            }
            Mode::Detected {
                chunker,
                base,
                limits,
            } => {
                let Some(open) = chunker.open_chunk() else {
                    return Err(TurnError::NoSpeech);
                };
                let from = *base + open.start;
                **chunker = Chunker::within(true, *limits);
                *base = self.heard;
                (from, open.samples)
            }
        };
        heard.extend(self.settle(turn.0, turn.1, false));
        Ok(heard)
    }

    /// Forgets the audio not yet committed.
    pub fn clear(&mut self) {
        self.resampler = StreamingResampler::new(self.rate);
        self.open_item = None;
        match &mut self.mode {
            Mode::Manual { buffer, start } => {
                buffer.clear();
                *start = self.heard;
            }
            Mode::Detected {
                chunker,
                base,
                limits,
            } => {
                **chunker = Chunker::within(true, *limits);
                *base = self.heard;
            }
        }
    }

    /// Audio at `rate` from now on (what the old rate held back is heard first).
    pub fn set_rate(&mut self, rate: u32) -> Vec<Heard> {
        if rate == self.rate {
            return Vec::new();
        }
        let heard = self.flush();
        self.rate = rate;
        self.resampler = StreamingResampler::new(rate);
        heard
    }

    /// Turns cut by `detection` from now on; audio not yet committed is kept (with detection,
    /// the speech begun so far) and heard again the new way.
    pub fn set_detection(&mut self, detection: Option<TurnDetection>) -> Vec<Heard> {
        let (start, pending) = match &mut self.mode {
            Mode::Manual { buffer, start } => (*start, std::mem::take(buffer)),
            Mode::Detected { chunker, base, .. } => match chunker.open_chunk() {
                Some(open) => (*base + open.start, open.samples),
                None => (self.heard, Vec::new()),
            },
        };
        self.mode = match detection {
            None => Mode::Manual {
                buffer: Vec::new(),
                start,
            },
            Some(detection) => Mode::Detected {
                chunker: Box::new(Chunker::within(true, detection.limits())),
                base: start,
                limits: detection.limits(),
            },
        };
        // Speech already announced is announced again if the new way hears it.
        self.open_item = None;
        self.heard = start;
        self.hear(&pending)
    }

    /// A turn is given ahead `seconds` before its commit, [`AHEAD_OF_COMMIT_SECONDS`] at least
    /// (as soon as its pause begins, if that is sooner): so long that its text is ready at the
    /// commit, when turns take that long to be heard.
    pub fn hear_ahead_by(&mut self, seconds: f64) {
        let seconds = seconds.max(AHEAD_OF_COMMIT_SECONDS);
        self.ahead_by = (seconds * RATE as f64) as usize;
    }

    /// What changed since the last call in the turn that settles unless more speech comes
    /// (None: nothing). With detection, in a pause that may end the open turn, once it is
    /// [`Turns::hear_ahead_by`] from committing it, the turn as its commit would hold it,
    /// which can be heard ahead while the pause lasts; then [`Ahead::Nothing`] once the voice
    /// comes back or the turn is committed. Without detection nothing settles before the
    /// client's commit.
    pub fn ahead(&mut self) -> Option<Ahead> {
        let Mode::Detected {
            chunker,
            base,
            limits,
        } = &self.mode
        else {
            return self.settling.take().map(|_| Ahead::Nothing);
        };
        // The pause commits the turn once it has lasted `long_pause` frames past the padding
        // after the turn's end.
        let to_commit = (limits.long_pause + limits.padding) * FRAME;
        let after = to_commit.saturating_sub(self.ahead_by);
        let heard = self.heard;
        let now = chunker
            .settling()
            .map(|range| base + range.start..base + range.end)
            .filter(|range| heard >= range.end + after);
        if now == self.settling {
            return None;
        }
        self.settling = now.clone();
        Some(match now.and_then(|_| chunker.settling_chunk()) {
            Some(chunk) => Ahead::Settling(chunk.samples),
            None => Ahead::Nothing,
        })
    }

    /// 16 kHz samples heard since the session began.
    pub fn heard_samples(&self) -> usize {
        self.heard
    }

    /// What the resampler holds back, heard now.
    fn flush(&mut self) -> Vec<Heard> {
        let resampler = std::mem::replace(&mut self.resampler, StreamingResampler::new(self.rate));
        let rest = resampler.finish();
        self.hear(&rest)
    }

    fn hear(&mut self, samples: &[f32]) -> Vec<Heard> {
        self.heard += samples.len();
        let mut heard = Vec::new();
        let (chunker, base) = match &mut self.mode {
            Mode::Manual { buffer, .. } => {
                buffer.extend_from_slice(samples);
                return heard;
            }
            Mode::Detected { chunker, base, .. } => (chunker, *base),
        };
        let mut ready = Vec::new();
        chunker.push(samples, &mut |chunk| ready.push(chunk));
        let open = chunker.open_from();
        let starts: Vec<usize> = ready.iter().skip(1).map(|c| c.start).collect();
        let count = ready.len();
        for (i, chunk) in ready.into_iter().enumerate() {
            let end = chunk.range().end;
            let goes_on = starts.get(i) == Some(&end) || (i + 1 == count && open == Some(end));
            heard.extend(self.settle(base + chunk.start, chunk.samples, !goes_on));
            if goes_on {
                heard.push(self.announce(base + end));
            }
        }
        if let Some(start) = open
            && self.open_item.is_none()
        {
            heard.push(self.announce(base + start));
        }
        heard
    }

    /// Speech began at sample `start`: the turn it opens gets its item id.
    fn announce(&mut self, start: usize) -> Heard {
        let item_id = new_item_id();
        self.open_item = Some(item_id.clone());
        Heard::SpeechStarted {
            item_id,
            audio_start_ms: ms(start),
        }
    }

    /// The item id of the turn being settled from sample `start`: the announced one; with
    /// detection, speech that came and went within one block is announced first.
    fn settling_item(&mut self, start: usize, heard: &mut Vec<Heard>) -> String {
        if let Some(id) = self.open_item.take() {
            return id;
        }
        if matches!(self.mode, Mode::Manual { .. }) {
            return new_item_id();
        }
        let started = self.announce(start);
        heard.push(started);
        self.open_item.take().unwrap_or_else(new_item_id)
    }

    /// The turn of `samples` from sample `start` is settled; `stopped`: a pause ended it.
    fn settle(&mut self, start: usize, samples: Vec<f32>, stopped: bool) -> Vec<Heard> {
        let mut heard = Vec::new();
        let item_id = self.settling_item(start, &mut heard);
        let end = start + samples.len();
        if stopped {
            heard.push(Heard::SpeechStopped {
                item_id: item_id.clone(),
                audio_end_ms: ms(end),
            });
        }
        let previous_item_id = self.last_item.replace(item_id.clone());
        heard.push(Heard::Committed(Turn {
            item_id,
            previous_item_id,
            samples,
            start_ms: ms(start),
            end_ms: ms(end),
        }));
        heard
    }
}

fn ms(samples: usize) -> u64 {
    (samples as u64 * 1000) / RATE as u64
}

/// A new conversation item's id.
fn new_item_id() -> String {
    format!("item_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::resample::StreamingResampler;

    /// A corpus clip as PCM16 at `rate`.
    fn clip(id: &str, rate: u32) -> Vec<i16> {
        let path = format!("{}/corpus/clips/{id}.wav", env!("CARGO_MANIFEST_DIR"));
        let mut reader = hound::WavReader::open(path).unwrap();
        assert_eq!(reader.spec().sample_rate, 16_000);
        let samples: Vec<f32> = reader
            .samples::<i16>()
            .map(|s| f32::from(s.unwrap()) / 32_768.0)
            .collect();
        let mut resampler = StreamingResampler::between(16_000, rate);
        resampler.push(&samples);
        let mut out = resampler.take_output();
        out.extend(resampler.finish());
        out.iter().map(|&s| (s * 32_767.0) as i16).collect()
    }

    fn silence(seconds: f32, rate: u32) -> Vec<i16> {
        vec![0; (seconds * rate as f32) as usize]
    }

    /// Appends `audio` in 100 ms messages, gathering what it brought.
    fn stream(turns: &mut Turns, audio: &[i16], rate: u32) -> Vec<Heard> {
        audio
            .chunks(rate as usize / 10)
            .flat_map(|block| turns.append(block).unwrap())
            .collect()
    }

    fn committed(heard: &[Heard]) -> Vec<&Turn> {
        heard
            .iter()
            .filter_map(|h| match h {
                Heard::Committed(turn) => Some(turn),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn server_vad_announces_stops_and_commits_each_utterance_in_order() {
        let rate = 24_000;
        let mut audio = silence(0.5, rate);
        for id in ["real-goforward", "real-something"] {
            audio.extend(clip(id, rate));
            audio.extend(silence(1.5, rate));
        }
        let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
        let heard = stream(&mut turns, &audio, rate);
        let turns_heard = committed(&heard);
        assert_eq!(turns_heard.len(), 2, "{heard:?}");
        // Each item: started, stopped, committed, in that order, under one id.
        for turn in &turns_heard {
            let kinds: Vec<&str> = heard
                .iter()
                .filter_map(|h| match h {
                    Heard::SpeechStarted { item_id, .. } if *item_id == turn.item_id => {
                        Some("started")
                    }
                    Heard::SpeechStopped { item_id, .. } if *item_id == turn.item_id => {
                        Some("stopped")
                    }
                    Heard::Committed(t) if t.item_id == turn.item_id => Some("committed"),
                    _ => None,
                })
                .collect();
            assert_eq!(kinds, ["started", "stopped", "committed"]);
            assert!(turn.end_ms > turn.start_ms + 500);
            assert_eq!(
                turn.samples.len() as u64,
                (turn.end_ms - turn.start_ms) * 16,
                "16 kHz samples"
            );
        }
        assert_eq!(turns_heard[0].previous_item_id, None);
        assert_eq!(
            turns_heard[1].previous_item_id.as_deref(),
            Some(turns_heard[0].item_id.as_str())
        );
        assert!(
            turns_heard[0].start_ms >= 200,
            "the leading silence is not a turn"
        );
        assert!(turns_heard[1].start_ms > turns_heard[0].end_ms);
    }

    #[test]
    fn a_reading_past_twenty_seconds_ends_at_its_next_pause_or_dip_and_is_committed_soon_after() {
        // 72 s of two readers, one after the other, who pause too briefly to end a turn for
        // longer than 20 s: the reading is one turn up to 20 s; past that, the turn ends at its
        // next pause (or dip of the voice, the next turn then starting where it ended) and is
        // committed within a second; no turn is longer than Whisper hears at once.
        let rate = 24_000;
        let mut audio = clip("real-endgame", rate);
        audio.extend(clip("real-two-cities", rate));
        audio.extend(silence(1.5, rate));
        let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
        let mut heard = Vec::new();
        for (i, block) in audio.chunks(rate as usize / 10).enumerate() {
            let now_ms = (i as u64 + 1) * 100;
            heard.extend(
                turns
                    .append(block)
                    .unwrap()
                    .into_iter()
                    .map(|h| (now_ms, h)),
            );
        }
        let commits: Vec<(u64, &Turn)> = heard
            .iter()
            .filter_map(|(at, h)| match h {
                Heard::Committed(turn) => Some((*at, turn)),
                _ => None,
            })
            .collect();
        let spans: Vec<(u64, u64, u64)> = commits
            .iter()
            .map(|(at, turn)| (*at, turn.start_ms, turn.end_ms))
            .collect();
        assert!(commits.len() >= 2, "{spans:?}");
        for (at, turn) in &commits {
            assert!(at - turn.end_ms <= 1_000, "late: {spans:?}");
            assert!(
                turn.end_ms - turn.start_ms <= LONGEST_TURN_SECONDS as u64 * 1000,
                "{spans:?}"
            );
            let stopped = heard.iter().any(|(_, h)| {
                matches!(h, Heard::SpeechStopped { item_id, .. } if *item_id == turn.item_id)
            });
            // A turn cut while speech goes on: the next one starts where it ended, at once.
            if !stopped {
                let next_starts = heard.iter().any(|(when, h)| {
                    *when == *at
                        && matches!(h, Heard::SpeechStarted { audio_start_ms, .. }
                            if *audio_start_ms == turn.end_ms)
                });
                assert!(next_starts, "{spans:?}");
            }
        }
        assert!(
            commits
                .iter()
                .any(|(_, turn)| turn.end_ms - turn.start_ms >= 20_000),
            "{spans:?}"
        );
        assert!(commits.len() >= 3, "{spans:?}");
    }

    #[test]
    fn a_turn_heard_ahead_in_its_pause_is_the_turn_committed() {
        // Two short utterances, then a reading whose clauses end in pauses too short to end
        // its turn: a turn given ahead that a pause ends is committed as it was given, and the
        // voice coming back withdraws what was given.
        let rate = 24_000;
        let mut audio = silence(0.5, rate);
        for id in ["real-goforward", "real-something", "real-two-cities"] {
            audio.extend(clip(id, rate));
            audio.extend(silence(1.5, rate));
        }
        let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
        let mut settling: Option<Vec<f32>> = None;
        let (mut matched, mut withdrawn) = (0, 0);
        for block in audio.chunks(rate as usize / 10) {
            let heard = turns.append(block).unwrap();
            let commits = committed(&heard);
            for turn in &commits {
                let stopped = heard.iter().any(|h| {
                    matches!(h, Heard::SpeechStopped { item_id, .. } if *item_id == turn.item_id)
                });
                // (A turn past 20 s ends at a shorter pause: it may be committed before it
                // is due to be given.)
                if stopped && let Some(given) = settling.take() {
                    assert!(
                        given == turn.samples,
                        "the turn ending at {} ms was given ahead otherwise",
                        turn.end_ms
                    );
                    matched += 1;
                }
            }
            match turns.ahead() {
                Some(Ahead::Settling(samples)) => settling = Some(samples),
                Some(Ahead::Nothing) => {
                    withdrawn += usize::from(commits.is_empty());
                    settling = None;
                }
                None => {}
            }
        }
        assert!(matched >= 3, "{matched} turns heard ahead");
        assert!(withdrawn >= 1, "no pause was withdrawn");
        assert_eq!(turns.ahead(), None, "nothing changed since");
        let mut manual = Turns::new(rate, None);
        stream(&mut manual, &clip("real-goforward", rate), rate);
        assert_eq!(manual.ahead(), None, "without detection nothing settles");
    }

    #[test]
    fn a_turn_is_given_ahead_as_long_before_its_commit_as_turns_take_to_be_heard() {
        // Where a turn is first given ahead, and where it is committed (ms of audio heard).
        let given_and_committed = |ahead_by: Option<f64>| {
            let rate = 16_000;
            let mut audio = clip("real-goforward", rate);
            audio.extend(silence(2.0, rate));
            let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
            if let Some(seconds) = ahead_by {
                turns.hear_ahead_by(seconds);
            }
            let (mut given, mut committed_at) = (None, None);
            for (i, block) in audio.chunks(rate as usize / 100).enumerate() {
                let heard = turns.append(block).unwrap();
                if !committed(&heard).is_empty() {
                    committed_at.get_or_insert(i * 10);
                }
                if let Some(Ahead::Settling(_)) = turns.ahead() {
                    given.get_or_insert(i * 10);
                }
            }
            (given.unwrap(), committed_at.unwrap())
        };
        let (given, committed) = given_and_committed(None);
        assert_eq!(committed - given, 300, "0.3 s before its commit");
        let (given, committed) = given_and_committed(Some(0.4));
        assert_eq!(committed - given, 400);
        // Never less than 0.3 s; never before the pause begins (0.72 s of silence and the
        // padding after the speech commit it).
        let (given, committed) = given_and_committed(Some(0.1));
        assert_eq!(committed - given, 300);
        let (soonest, committed) = given_and_committed(Some(30.0));
        assert!((400..=960).contains(&(committed - soonest)), "{soonest}");
    }

    #[test]
    fn the_silence_setting_decides_when_a_turn_ends() {
        let rate = 16_000;
        let mut audio = clip("real-goforward", rate);
        // With the recordings' own quiet ends, a pause of about 1.3 s.
        audio.extend(silence(0.3, rate));
        audio.extend(clip("real-something", rate));
        audio.extend(silence(3.0, rate));
        let count = |silence_duration_ms| {
            let detection = TurnDetection {
                silence_duration_ms,
                ..TurnDetection::DEFAULT
            };
            let mut turns = Turns::new(rate, Some(detection));
            committed(&stream(&mut turns, &audio, rate)).len()
        };
        assert_eq!(count(720), 2, "a 1.3 s pause ends a turn");
        assert_eq!(count(2_000), 1, "not when 2 s of silence are asked for");
    }

    #[test]
    fn a_turn_proves_itself_speech_as_dictation_does_whatever_the_settings() {
        for threshold in [0.1, 0.5, 0.95] {
            let detection = TurnDetection {
                threshold,
                prefix_padding_ms: 0,
                silence_duration_ms: 2_000,
            };
            assert_eq!(detection.limits().confident, Limits::LIVE.confident);
        }
    }

    #[test]
    fn without_detection_the_client_commits_everything_since_the_last_commit() {
        let rate = 24_000;
        let mut turns = Turns::new(rate, None);
        let audio = clip("real-goforward", rate);
        let heard = stream(&mut turns, &audio, rate);
        assert!(heard.is_empty(), "nothing until the client commits");
        let heard = turns.commit().unwrap();
        let [Heard::Committed(turn)] = heard.as_slice() else {
            panic!("one committed turn, no speech events: {heard:?}");
        };
        let expected = audio.len() * 16_000 / rate as usize;
        assert!(turn.samples.len().abs_diff(expected) < 16, "all of it");
        assert_eq!(turns.commit().unwrap_err(), TurnError::TooShort);
        turns.append(&silence(0.5, rate)).unwrap();
        turns.clear();
        assert_eq!(turns.commit().unwrap_err(), TurnError::TooShort);
    }

    #[test]
    fn uncommitted_audio_is_bounded() {
        let rate = 16_000;
        let mut turns = Turns::new(rate, None);
        let minute = silence(60.0, rate);
        turns.append(&minute).unwrap();
        turns.append(&minute).unwrap();
        assert_eq!(turns.append(&minute).unwrap_err(), TurnError::BufferFull);
        assert_eq!(
            turns.heard_samples(),
            2 * 60 * 16_000,
            "the refused append changed nothing"
        );
        assert!(turns.commit().is_ok());
        assert!(turns.append(&minute).is_ok());
    }

    #[test]
    fn a_commit_with_detection_takes_the_speech_begun() {
        let rate = 16_000;
        let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
        assert_eq!(turns.commit().unwrap_err(), TurnError::NoSpeech);
        let heard = stream(&mut turns, &clip("real-goforward", rate), rate);
        assert!(committed(&heard).is_empty(), "no pause yet");
        let heard = turns.commit().unwrap();
        assert_eq!(committed(&heard).len(), 1, "{heard:?}");
        let after = stream(&mut turns, &silence(2.0, rate), rate);
        assert!(
            committed(&after).is_empty(),
            "the committed speech is not heard twice"
        );
    }

    #[test]
    fn switching_to_manual_keeps_the_speech_begun() {
        let rate = 16_000;
        let mut turns = Turns::new(rate, Some(TurnDetection::DEFAULT));
        let speech = clip("real-goforward", rate);
        stream(&mut turns, &speech, rate);
        assert!(turns.set_detection(None).is_empty());
        let heard = turns.commit().unwrap();
        let turn = committed(&heard)[0];
        assert!(
            turn.samples.len() > speech.len() / 2,
            "the speech came along"
        );
    }
}

#[cfg(test)]
mod extremes {
    use super::*;

    /// Whatever settings a client chooses within the accepted ranges, every turn stays within
    /// the audio, in order, and no longer than the longest turn.
    #[test]
    fn the_extremes_of_every_setting_cut_sound_turns() {
        let rate = 16_000;
        let path = format!(
            "{}/corpus/clips/real-goforward.wav",
            env!("CARGO_MANIFEST_DIR")
        );
        let speech: Vec<i16> = hound::WavReader::open(path)
            .unwrap()
            .samples::<i16>()
            .map(Result::unwrap)
            .collect();
        let mut audio = Vec::new();
        for _ in 0..8 {
            audio.extend(&speech);
            audio.extend(vec![0i16; 8_000]);
        }
        for threshold in [0.0, 0.05, 0.5, 0.99, 1.0] {
            for prefix_padding_ms in [0, 2_000] {
                for silence_duration_ms in [100, 10_000] {
                    let detection = TurnDetection {
                        threshold,
                        prefix_padding_ms,
                        silence_duration_ms,
                    };
                    let mut turns = Turns::new(rate, Some(detection));
                    let mut heard: Vec<Heard> = audio
                        .chunks(1_600)
                        .flat_map(|block| turns.append(block).unwrap())
                        .collect();
                    heard.extend(turns.commit().unwrap_or_default());
                    let mut last_end = 0;
                    for turn in heard.iter().filter_map(|h| match h {
                        Heard::Committed(turn) => Some(turn),
                        _ => None,
                    }) {
                        assert!(turn.start_ms >= last_end, "{detection:?}: in order");
                        assert!(
                            turn.end_ms <= (audio.len() / 16) as u64 + 1,
                            "{detection:?}"
                        );
                        let longest = LONGEST_TURN_SECONDS * 16_000 + 1_600;
                        assert!(turn.samples.len() <= longest, "{detection:?}");
                        last_end = turn.end_ms;
                    }
                }
            }
        }
    }
}
