//! The open chunk of live audio, heard before it settles: provisional (tentative) text while
//! someone speaks, beside the capture; and the chunk as it will settle, heard ahead in a pause or
//! as the voice drops, so that its commit or the stop finds the text ready.

use super::*;

impl Listener {
    /// Live audio: provisional passes end when `stop` is cancelled (the capture stopped).
    pub fn stop_provisional_on(&mut self, stop: Cancel) {
        self.provisional_stop = Some(stop);
    }

    /// Live audio, once every block captured so far is heard: hears the open chunk again for
    /// provisional text, when someone is speaking, the spacing since the last pass over the
    /// same chunk has passed and the engine is free (provisional text never makes anyone wait);
    /// as the voice drops ([`Listener::hear_as_voice_drops`]) and in a pause
    /// ([`Listener::hear_ahead`]), hears it ahead.
    /// With `incoming`, the blocks still to come, a provisional pass goes on only while they
    /// carry the voice on ([`hear_while_listening`]).
    pub fn provisional(&mut self, incoming: Option<&Receiver<Vec<f32>>>) {
        let (Some(live), Some(stop)) = (&self.call.live, &self.provisional_stop) else {
            return;
        };
        if self.whole.is_some()
            || stop.is_cancelled()
            || self.failed.is_some()
            || self.on_segments.is_none()
        {
            return;
        }
        if self.chunker.settling().is_some() {
            self.hear_ahead();
            return;
        }
        if !self.chunker.speaking() || self.chunker.voice_dropped() {
            self.hear_as_voice_drops();
            return;
        }
        let same_chunk = self.passed_from.is_some() && self.chunker.open_from() == self.passed_from;
        if same_chunk && Instant::now() < self.next_provisional {
            return;
        }
        let Some(chunk) = self
            .chunker
            .open_chunk()
            .filter(|c| c.samples.len() >= MIN_PROVISIONAL_SAMPLES)
        else {
            return;
        };
        let Some(slot) = live.queue.try_acquire() else {
            return;
        };
        let stop = stop.clone();
        self.hear_open_chunk(&chunk, &stop, OpenPass::Provisional, incoming);
        drop(slot);
        let settled = std::mem::take(&mut self.settled_beside_pass);
        self.settle(settled);
    }

    /// Live audio, in a pause: hears the open chunk as it settles unless more speech comes, once
    /// and when the engine is free, so that its commit (or the stop) finds its text ready: the
    /// same samples through the same request read the same. The pass is not abandoned when the
    /// capture stops (the stop settles the chunk as it is). It is heard ahead once for each way
    /// the chunk may settle (once a pause, unless a soft sound in the pause lengthens it), and
    /// the next provisional pass over the same chunk keeps its spacing from it.
    pub(super) fn hear_ahead(&mut self) {
        let Some(range) = self.chunker.settling() else {
            return;
        };
        if self
            .heard_ahead
            .as_ref()
            .is_some_and(|ahead| ahead.stands_for(&range))
        {
            return;
        }
        let Some(chunk) = self.chunker.settling_chunk() else {
            return;
        };
        self.hear_ahead_once_free(&chunk, range.end, OpenPass::Ahead);
    }

    /// Live audio, the voice just dropped (or gone, the chunk's padding still to come): hears
    /// the open chunk so far as a committed chunk is, once for each place the voice drops and
    /// when the engine is free and has rested as long as its last pass over the open chunk
    /// took, so that the commit (or a stop right after the last word) finds its text ready, or
    /// on the way, should nothing but quiet follow: heard only once the chunk settled, a
    /// sentence's text came hundreds of milliseconds after a stop right after its last word
    /// (`scripts/bench-dictation`, docs/journal/2026-12.md). Should the voice come back, the pass
    /// was the open chunk's provisional text.
    pub(super) fn hear_as_voice_drops(&mut self) {
        if Instant::now() < self.spaced_until {
            return;
        }
        let Some((chunk, settles_by)) = self
            .chunker
            .quiet_chunk()
            .filter(|(chunk, _)| chunk.samples.len() >= MIN_PROVISIONAL_SAMPLES)
        else {
            return;
        };
        let range = chunk.range();
        if self
            .heard_ahead
            .as_ref()
            .is_some_and(|ahead| ahead.range.start == range.start && ahead.settles_by == settles_by)
        {
            return;
        }
        self.hear_ahead_once_free(&chunk, settles_by, OpenPass::AsVoiceDrops);
    }

    /// Hears the open `chunk` ahead when the engine is free (the pass is not abandoned when the
    /// capture stops), and keeps what it heard for the chunk that settles with the same start
    /// and an end up to `settles_by`.
    pub(super) fn hear_ahead_once_free(
        &mut self,
        chunk: &SpeechChunk,
        settles_by: usize,
        pass: OpenPass,
    ) {
        let Some(live) = &self.call.live else {
            return;
        };
        let Some(_slot) = live.queue.try_acquire() else {
            return;
        };
        let cancel = self.call.cancel.clone();
        let (heard, took) = self.hear_open_chunk(chunk, &cancel, pass, None);
        self.engine += took;
        self.heard_ahead = heard.map(|heard| HeardAhead {
            range: chunk.range(),
            settles_by,
            heard,
        });
    }

    /// One pass over the open `chunk` (the engine slot taken), stopped early by `cancel` (a
    /// provisional one with `incoming`, also given up as the voice drops): the next
    /// provisional pass spaced from it and its segments sent as tentative text. What the
    /// engine heard (None when the pass failed or was stopped), and how long it took.
    pub(super) fn hear_open_chunk(
        &mut self,
        chunk: &SpeechChunk,
        cancel: &Cancel,
        pass: OpenPass,
        incoming: Option<&Receiver<Vec<f32>>>,
    ) -> (Option<EngineOutput>, Duration) {
        let started = Instant::now();
        let provisional = matches!(pass, OpenPass::Provisional);
        let detects_language = provisional && self.detects_language_ahead(chunk.samples.len());
        let (heard, given_up) = match incoming.filter(|_| provisional) {
            Some(incoming) => self.hear_listening(chunk, cancel, incoming),
            None => (self.hear_chunk(chunk, cancel, provisional), false),
        };
        let took = started.elapsed();
        let heard_words = heard
            .as_ref()
            .is_ok_and(|heard| !heard.text.trim().is_empty());
        let every = match pass {
            OpenPass::Provisional if !heard_words => PROVISIONAL_EVERY_UNTIL_WORDS,
            _ => PROVISIONAL_EVERY,
        };
        self.next_provisional = started + every.max(took * PROVISIONAL_SPACING);
        // A pass given up as the voice dropped leaves the pass ahead free to start at once.
        if !given_up {
            self.spaced_until = started + took * PROVISIONAL_SPACING;
        }
        self.passed_from = Some(chunk.start);
        tracing::debug!(
            seconds = chunk.samples.len() as f64 / SAMPLE_RATE,
            took_ms = took.as_millis() as u64,
            how = pass.name(),
            given_up,
            "open chunk heard"
        );
        let Ok(heard) = heard else {
            return (None, took);
        };
        // A pass that heard no words (a cough, a noise before the speech) settles nothing.
        if detects_language
            && !heard.text.trim().is_empty()
            && let Some(language) = &heard.language
        {
            self.settle_language(language);
        }
        if self.provisional_language.is_none() {
            self.provisional_language = heard.language.clone();
        }
        let timeline = chunk.timeline();
        let segments: Vec<Segment> = heard
            .segments
            .iter()
            .map(|s| s.clone().retimed(|t| timeline.seconds(t)))
            .collect();
        let language = self.language.clone().or(heard.language.clone());
        if let Some(sink) = &mut self.on_segments {
            sink(Listened::Tentative(&segments, language.as_deref()));
        }
        (Some(heard), took)
    }

    /// A provisional pass over `chunk` (stopped early by `stop`) while the blocks from
    /// `incoming` are heard beside it ([`Listener::hear_beside_pass`]), given up once they
    /// show the voice dropping; whether it was given up.
    pub(super) fn hear_listening(
        &mut self,
        chunk: &SpeechChunk,
        stop: &Cancel,
        incoming: &Receiver<Vec<f32>>,
    ) -> (Result<EngineOutput, EngineError>, bool) {
        let given_up = Cancel::new();
        let whole = std::iter::once(0..chunk.samples.len()).collect();
        let request = self.request(&chunk.samples, whole, &given_up, true);
        let engine = self.call.engine.clone();
        let model = self.call.model.id;
        let cancelled = self.call.cancel.clone();
        hear_while_listening(
            engine.as_ref(),
            model,
            &request,
            &given_up,
            stop,
            incoming,
            |block| self.hear_beside_pass(block) || cancelled.is_cancelled(),
        )
    }
}

/// Why the open chunk of live audio is heard before it settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OpenPass {
    /// For tentative text while someone speaks: the next pass replaces it, so the engine keeps
    /// it quick (no second attempts).
    Provisional,
    /// In a pause, for the text its commit gives when it settles on these samples: heard as a
    /// committed chunk is.
    Ahead,
    /// As the voice drops, for the text its commit or the stop gives should only quiet follow:
    /// heard as a committed chunk is.
    AsVoiceDrops,
}

/// The open chunk of live audio heard ahead: what the engine heard of the samples over `range`,
/// which stands for the chunk that settles with the same start and an end from `range`'s to
/// `settles_by` (more quiet heard after them, no speech).
pub(super) struct HeardAhead {
    pub(super) range: Range<usize>,
    pub(super) settles_by: usize,
    pub(super) heard: EngineOutput,
}

impl HeardAhead {
    /// Whether the chunk settled over `range` is the one heard ahead.
    pub(super) fn stands_for(&self, range: &Range<usize>) -> bool {
        range.start == self.range.start && (self.range.end..=self.settles_by).contains(&range.end)
    }
}

impl OpenPass {
    pub(super) fn name(self) -> &'static str {
        match self {
            OpenPass::Provisional => "provisionally",
            OpenPass::Ahead => "ahead",
            OpenPass::AsVoiceDrops => "as the voice drops",
        }
    }
}
