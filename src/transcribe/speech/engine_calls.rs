//! The engine calls themselves: the request built for a chunk (language, prompt, what was said
//! before), the engine taken from the slot the stage holds, and an answer with nothing heard.

use super::*;

impl Listener {
    /// One engine call on `chunks` of `samples`, timed; live audio first takes a slot.
    pub(super) fn call_engine(
        &mut self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
    ) -> Result<EngineOutput, EngineError> {
        self.with_engine(|listener| {
            listener.engine_call(samples, chunks, &listener.call.cancel, false)
        })
    }

    /// `call`, timed, once the engine is this transcription's: live audio first takes a slot,
    /// a file lets a live chunk waiting for the engine go first.
    pub(super) fn with_engine(
        &mut self,
        call: impl FnOnce(&Listener) -> Result<EngineOutput, EngineError>,
    ) -> Result<EngineOutput, EngineError> {
        if let Some(held) = &mut self.call.held {
            held.give_way()?;
        }
        let _slot = match &self.call.live {
            Some(live) => Some(
                live.runtime
                    .block_on(live.queue.acquire_admitted())
                    .map_err(|e| EngineError::Failed(e.to_string()))?,
            ),
            None => None,
        };
        let started = Instant::now();
        let output = call(self);
        self.engine += started.elapsed();
        output
    }

    /// The engine call on a live `chunk` (stopped early by `cancel`; `provisional`: for
    /// tentative text), its segments timed from the chunk's start. A committed chunk, or one
    /// heard ahead to be committed, is heard with the chunks said before it in front
    /// ([`SaidBeforeChunks`]), so that the commit and the pass ahead read the same; tentative
    /// text is heard alone, which is quicker.
    pub(super) fn hear_chunk(
        &self,
        chunk: &SpeechChunk,
        cancel: &Cancel,
        provisional: bool,
    ) -> Result<EngineOutput, EngineError> {
        let before = self
            .said_before
            .as_ref()
            .filter(|_| !provisional)
            .and_then(|said_before| said_before.before(chunk));
        let Some((samples, said)) = before else {
            let whole = std::iter::once(0..chunk.samples.len()).collect();
            return self.engine_call(&chunk.samples, whole, cancel, provisional);
        };
        let from = said.samples as f64 / SAMPLE_RATE;
        let whole = std::iter::once(0..samples.len()).collect();
        let request = EngineRequest {
            said_before: Some(said),
            ..self.request(&samples, whole, cancel, provisional)
        };
        let mut heard = self.call.engine.transcribe(self.call.model.id, &request)?;
        heard.segments = std::mem::take(&mut heard.segments)
            .into_iter()
            .map(|s| s.retimed(|t| (t - from).max(0.0)))
            .collect();
        Ok(heard)
    }

    /// The engine call on `chunks` of `samples`, with the request's settings, stopped early
    /// by `cancel`; `provisional`: for tentative text ([`EngineRequest::provisional`]).
    pub(super) fn engine_call(
        &self,
        samples: &[f32],
        chunks: Vec<Range<usize>>,
        cancel: &Cancel,
        provisional: bool,
    ) -> Result<EngineOutput, EngineError> {
        let request = self.request(samples, chunks, cancel, provisional);
        self.call.engine.transcribe(self.call.model.id, &request)
    }

    /// The engine request for `chunks` of `samples` with the transcription's settings.
    pub(super) fn request<'a>(
        &self,
        samples: &'a [f32],
        chunks: Vec<Range<usize>>,
        cancel: &Cancel,
        provisional: bool,
    ) -> EngineRequest<'a> {
        EngineRequest {
            samples,
            chunks,
            trimmed_to_speech: self.call.vad,
            language: match &self.provisional_language {
                Some(heard)
                    if provisional
                        && !self.language_settled()
                        && !self.detects_language_ahead(samples.len()) =>
                {
                    LanguageChoice::Exact(heard.clone())
                }
                _ => self.call.language.clone(),
            },
            task: self.call.task,
            initial_prompt: self.call.initial_prompt.clone(),
            words: self.call.words,
            cancel: cancel.clone(),
            calls_at_once: self.shared_calls(),
            provisional,
            said_before: None,
        }
    }

    /// The answer for audio without speech: no text, and the language the engine would have
    /// named without hearing anything (English for English-only models, else the one given).
    pub(super) fn nothing_heard(&self) -> EngineOutput {
        let language = match &self.call.language {
            _ if !self.call.model.multilingual() => Some("en".to_string()),
            LanguageChoice::Exact(code) => Some(code.to_ascii_lowercase()),
            LanguageChoice::Auto | LanguageChoice::Shortlist(_) => None,
        };
        EngineOutput {
            language,
            ..EngineOutput::default()
        }
    }
}
