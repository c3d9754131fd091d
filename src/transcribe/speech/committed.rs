//! Settled chunks heard: after what was said before (or alone when that reading fails), side
//! by side on an engine that hears several at once, the language settled once, and the text
//! kept in the timeline's order.

use super::*;

impl Listener {
    /// Transcribes one chunk (or, for an engine that hears whole clips, notes where it is);
    /// false when the engine failed or the request was cancelled.
    pub(super) fn transcribe(&mut self, chunk: SpeechChunk) -> bool {
        if let Some((_, chunks)) = &mut self.whole {
            chunks.push(chunk.range());
            return self.call.live.is_none() || self.hear_whole_so_far();
        }
        if self.call.cancel.is_cancelled() {
            self.failed = Some(EngineError::Cancelled);
            return false;
        }
        let at_once = self.call.engine.chunks_at_once();
        if self.call.live.is_none()
            && at_once > 1
            && self.shared_calls() == 1
            && self.language_settled()
        {
            // The first chunk waits for a second: a file of one chunk (most short clips) is
            // heard alone, on all the engine's threads.
            if self.side_by_side.is_none() {
                let Some(first) = self.first.take() else {
                    self.first = Some(chunk);
                    return true;
                };
                if !self.hear_side_by_side(first, at_once) {
                    return false;
                }
            }
            return self.hear_side_by_side(chunk, at_once);
        }
        self.hear_alone(chunk)
    }

    /// Transcribes `chunk` in one engine call of its own; false when the engine failed or the
    /// request was cancelled.
    pub(super) fn hear_alone(&mut self, chunk: SpeechChunk) -> bool {
        let started = Instant::now();
        let (heard, ahead) = match self.heard_ahead.take() {
            Some(ahead) if ahead.stands_for(&chunk.range()) => (Ok(ahead.heard), true),
            _ => (
                self.with_engine(|listener| {
                    listener.hear_chunk(&chunk, &listener.call.cancel, false)
                }),
                false,
            ),
        };
        tracing::debug!(
            ahead,
            start = chunk.start as f64 / SAMPLE_RATE,
            seconds = chunk.samples.len() as f64 / SAMPLE_RATE,
            took_ms = started.elapsed().as_millis() as u64,
            text = heard.as_ref().map_or("", |h| h.text.as_str()),
            "chunk heard"
        );
        let Some(heard) = self.heard_or_failed(heard) else {
            return false;
        };
        if let Some(said_before) = &mut self.said_before {
            said_before.committed(chunk.range(), &heard.text);
        }
        self.keep(heard, &chunk.timeline());
        true
    }

    /// What a call on a file's chunks heard, its language settling the rest's (the first
    /// chunk's language, as it would for the whole audio); None when it failed, the failure
    /// kept.
    pub(super) fn heard_or_failed(
        &mut self,
        heard: Result<EngineOutput, EngineError>,
    ) -> Option<EngineOutput> {
        let heard = match heard {
            Ok(heard) => heard,
            Err(err) => {
                self.failed = Some(err);
                return None;
            }
        };
        if self.language.is_none()
            && let Some(language) = &heard.language
        {
            self.settle_language(language);
        }
        Some(heard)
    }

    /// Takes `language` as the one every chunk from now on is heard in.
    pub(super) fn settle_language(&mut self, language: &str) {
        self.language = Some(language.to_string());
        self.call.language = LanguageChoice::Exact(language.to_string());
        self.provisional_language = Some(language.to_string());
    }

    /// Whether a provisional pass over `samples` of the open chunk detects the language for
    /// the whole live transcription ([`LANGUAGE_AHEAD_SAMPLES`]).
    pub(super) fn detects_language_ahead(&self, samples: usize) -> bool {
        self.call.live.is_some()
            && self.language.is_none()
            && !self.language_settled()
            && samples >= LANGUAGE_AHEAD_SAMPLES
    }

    /// Engine calls that run beside this transcription's on its slot (1 when it has the
    /// engine to itself): each of its calls takes that share of the threads.
    pub(super) fn shared_calls(&self) -> usize {
        self.call.held.as_ref().map_or(1, HeldSlot::calls_at_once)
    }

    /// Whether every chunk is heard in a language known already (given, or the one an
    /// English-only model hears), so that none waits for the first to detect it.
    pub(super) fn language_settled(&self) -> bool {
        !self.call.model.multilingual() || matches!(self.call.language, LanguageChoice::Exact(_))
    }

    /// Gives `chunk` to the engine's workers (a live chunk waiting for the engine goes first:
    /// what is out is heard, then the engine is let go) and hands on what they heard so far, in
    /// order. False when the engine failed or the request was cancelled.
    pub(super) fn hear_side_by_side(&mut self, chunk: SpeechChunk, at_once: usize) -> bool {
        if let Some(held) = &self.call.held
            && held.queue.urgent_waiting()
        {
            if !self.take_heard(true) {
                return false;
            }
            if let Some(side_by_side) = self.side_by_side.take() {
                self.engine += side_by_side.busy();
            }
            if let Some(held) = &mut self.call.held
                && let Err(err) = held.give_way()
            {
                self.failed = Some(err);
                return false;
            }
        }
        let mut side_by_side = self.side_by_side.take().unwrap_or_else(|| {
            let settings = CallSettings {
                engine: self.call.engine.clone(),
                model: self.call.model.id,
                request: self.request(&[], Vec::new(), &self.call.cancel, false),
            };
            SideBySide::new(settings, at_once)
        });
        side_by_side.give(chunk.timeline(), chunk.samples);
        self.side_by_side = Some(side_by_side);
        self.take_heard(false)
    }

    /// Hands on, in the audio's order, what the workers heard (`wait`: everything given out,
    /// waiting for it). False when a chunk failed (the failure kept).
    pub(super) fn take_heard(&mut self, wait: bool) -> bool {
        while let Some((timeline, heard)) = self.side_by_side.as_mut().and_then(|s| s.ready(wait)) {
            let Some(heard) = self.heard_or_failed(heard) else {
                return false;
            };
            self.keep(heard, &timeline);
        }
        true
    }

    /// Keeps what the engine heard of the audio `timeline` places (its segments moved into the
    /// audio's timeline) and hands the segments on.
    pub(super) fn keep(&mut self, heard: EngineOutput, timeline: &Timeline) {
        let segments: Vec<Segment> = heard
            .segments
            .into_iter()
            .map(|s| s.retimed(|t| timeline.seconds(t)))
            .collect();
        if let Some(sink) = &mut self.on_segments
            && !segments.is_empty()
        {
            sink(Listened::Segments(&segments, self.language.as_deref()));
        }
        if !heard.text.trim().is_empty() {
            self.texts.push(heard.text.trim().to_string());
        }
        self.segments.extend(segments);
    }

    /// Live audio: reports that `chunk` is settled (its speech reported first, if it came and
    /// went between two blocks); `goes_on`: where the next chunk starts when speech went on
    /// into it without a pause that ends a chunk (this one was closed by its length), so that
    /// speech neither stopped nor started again.
    pub(super) fn commit(&mut self, chunk: &SpeechChunk, goes_on: Option<usize>) {
        if self.call.live.is_none() {
            return;
        }
        if self.announced.is_none() {
            self.report_speech(chunk.start);
        }
        let range = chunk.range();
        self.announced = goes_on;
        if let Some(sink) = &mut self.on_segments {
            sink(Listened::Committed {
                start: range.start as f64 / SAMPLE_RATE,
                end: range.end as f64 / SAMPLE_RATE,
                goes_on: goes_on.is_some(),
            });
        }
    }

    /// Live audio: reports that speech began at sample `start`.
    pub(super) fn report_speech(&mut self, start: usize) {
        self.announced = Some(start);
        if self.call.live.is_some()
            && let Some(sink) = &mut self.on_segments
        {
            sink(Listened::SpeechStarted {
                at: start as f64 / SAMPLE_RATE,
            });
        }
    }
}
