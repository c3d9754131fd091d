//! How a chunk is heard again when its text is rejected: the attempts after the first, in
//! order (sampling at rising temperatures on the same window, a wider fitted window, the full
//! window), and the verdict on each attempt that ranks them when none is accepted.

use super::super::Segment;
use super::super::guard::{self, Trouble};
use super::window::{Doubt, FULL_WINDOW_FRAMES, WINDOW_STEP_FRAMES, doubt};

/// One way of hearing a chunk again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The window of the attempt before, sampling at temperatures from 0.2 to 1.0
    /// (whisper.cpp's fallback: the encoder runs once, the decoder until its entropy and
    /// log-probability thresholds accept a decode).
    Temperature,
    /// A fitted window with more margin: twice the attempt before's, at least 5 s more (the
    /// full window when that reaches 30 s).
    Wider,
    /// The model's full 30 s window.
    Full,
}

/// The retries after the first attempt, in order: for a chunk first heard through a fitted
/// window, and for one first heard through the full window (a wider window does not apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub fitted: Vec<Retry>,
    pub full: Vec<Retry>,
}

/// The orders chosen by measurement (see docs/journal/2026-11.md, "Retry orders"): a wider window for
/// fitted ones (it resolved every loop of the corpus's clips, at a third of a full window's
/// cost), rising temperatures for the full window; a loop that survives is cut out.
impl Default for Recovery {
    fn default() -> Recovery {
        Recovery {
            fitted: vec![Retry::Wider],
            full: vec![Retry::Temperature],
        }
    }
}

/// One pass over a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// The encoder window in frames; None: the model's full window.
    pub window: Option<usize>,
    /// Sampled at rising temperatures rather than greedy.
    pub sampled: bool,
}

/// Frames a wider window adds at least (5 s).
const WIDER_BY_FRAMES: usize = 250;

impl Recovery {
    /// No second attempt: a rejected text is cut (or given as it is when it does not loop).
    pub fn none() -> Recovery {
        Recovery {
            fitted: Vec::new(),
            full: Vec::new(),
        }
    }

    /// Parses a comma-separated list of `temperature`, `wider` and `full` (`none` for no retry),
    /// the order for every chunk.
    pub fn parse(text: &str) -> Result<Recovery, String> {
        let mut retries = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            retries.push(match name {
                "temperature" | "temp" => Retry::Temperature,
                "wider" => Retry::Wider,
                "full" => Retry::Full,
                "none" => continue,
                other => return Err(format!("unknown retry '{other}': temperature, wider, full")),
            });
        }
        Ok(Recovery {
            fitted: retries.clone(),
            full: retries,
        })
    }

    /// Every attempt at a chunk whose first window is `fitted` (None: the full window), in
    /// order, none twice.
    pub fn attempts(&self, fitted: Option<usize>) -> Vec<Attempt> {
        let mut attempts = vec![Attempt {
            window: fitted,
            sampled: false,
        }];
        let retries = if fitted.is_some() {
            &self.fitted
        } else {
            &self.full
        };
        for retry in retries {
            let before = attempts[attempts.len() - 1];
            let next = match retry {
                Retry::Temperature => Attempt {
                    sampled: true,
                    ..before
                },
                Retry::Wider => match before.window {
                    Some(frames) => Attempt {
                        window: Some(
                            (frames * 2)
                                .max(frames + WIDER_BY_FRAMES)
                                .div_ceil(WINDOW_STEP_FRAMES)
                                * WINDOW_STEP_FRAMES,
                        )
                        .filter(|&w| w < FULL_WINDOW_FRAMES),
                        sampled: false,
                    },
                    None => continue,
                },
                Retry::Full => Attempt {
                    window: None,
                    sampled: false,
                },
            };
            if !attempts.contains(&next) {
                attempts.push(next);
            }
        }
        attempts
    }
}

/// What the guard and the window make of an attempt, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Fine,
    /// The decoder was unsure of its words.
    Unsure,
    /// A fitted window's doubt: the text stops early, or there is none.
    Doubted(Doubt),
    /// A loop: never given out as it is.
    Loop(Trouble),
}

impl Verdict {
    /// The verdict on `segments` heard in a chunk of `seconds` through a fitted window or not.
    pub fn of(segments: &[Segment], seconds: f64, fitted: bool) -> Verdict {
        match guard::trouble(segments, seconds) {
            Some(trouble) if trouble.is_loop() => Verdict::Loop(trouble),
            unsure => match doubt(segments, seconds).filter(|_| fitted) {
                Some(doubt) => Verdict::Doubted(doubt),
                None if unsure.is_some() => Verdict::Unsure,
                None => Verdict::Fine,
            },
        }
    }

    pub fn is_loop(self) -> bool {
        matches!(self, Verdict::Loop(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greedy(window: Option<usize>) -> Attempt {
        Attempt {
            window,
            sampled: false,
        }
    }

    fn sampled(window: Option<usize>) -> Attempt {
        Attempt {
            window,
            sampled: true,
        }
    }

    #[test]
    fn attempts_follow_the_recovery_and_never_repeat() {
        let all = Recovery::parse("temperature,wider,full").unwrap();
        assert_eq!(
            all.attempts(Some(256)),
            [
                greedy(Some(256)),
                sampled(Some(256)),
                greedy(Some(512)),
                greedy(None)
            ]
        );
        // At least 5 s wider, in whole steps.
        assert_eq!(
            Recovery::parse("wider").unwrap().attempts(Some(640)),
            [greedy(Some(640)), greedy(Some(1280))]
        );
        // The full window first: no wider window, no second full one.
        assert_eq!(all.attempts(None), [greedy(None), sampled(None)]);
        // A wider window that reaches 30 s is the full one.
        let wider = Recovery::parse("wider, full").unwrap();
        assert_eq!(wider.attempts(Some(900)), [greedy(Some(900)), greedy(None)]);
        assert_eq!(
            Recovery::parse("full,temp").unwrap().attempts(Some(300)),
            [greedy(Some(300)), greedy(None), sampled(None)]
        );
        assert_eq!(
            Recovery::parse("none").unwrap().attempts(None),
            [greedy(None)]
        );
        assert!(Recovery::parse("beam").is_err());
        let default = Recovery::default();
        assert_eq!(
            default.attempts(Some(256)),
            [greedy(Some(256)), greedy(Some(512))]
        );
        assert_eq!(default.attempts(None), [greedy(None), sampled(None)]);
    }

    #[test]
    fn verdicts_rank_loops_worst_and_fitted_doubts_only_on_fitted_windows() {
        let short = [Segment::new(0.0, 1.0, "Please send")];
        assert_eq!(
            Verdict::of(&short, 8.0, true),
            Verdict::Doubted(Doubt::EarlyStop)
        );
        assert_eq!(Verdict::of(&short, 8.0, false), Verdict::Fine);
        let looping = [Segment::new(0.0, 4.0, "go go go go go go go go go")];
        assert_eq!(
            Verdict::of(&looping, 4.0, false),
            Verdict::Loop(Trouble::Repetition)
        );
        assert!(Verdict::Fine < Verdict::Unsure);
        assert!(Verdict::Unsure < Verdict::Doubted(Doubt::Nothing));
        assert!(Verdict::Doubted(Doubt::EarlyStop) < Verdict::Loop(Trouble::TooFast));
    }
}
