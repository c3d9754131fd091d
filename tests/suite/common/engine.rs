//! An engine called directly on audio as the server would hear it: voice activity detection
//! first (or the whole audio as one chunk), the language given.

use verbatim::audio::vad;
use verbatim::cancel::Cancel;
use verbatim::engine::{Engine, EngineOutput, EngineRequest, LanguageChoice, Task};

/// `samples` through `engine`'s `model`, in `language`; `vad`: in chunks of speech (else whole);
/// `words`: timed words asked for.
pub fn hear(
    engine: &dyn Engine,
    model: &str,
    samples: &[f32],
    vad: bool,
    language: &str,
    task: Task,
    words: bool,
) -> EngineOutput {
    let request = request(samples, vad, language, task, words);
    engine.transcribe(model, &request).expect("transcribed")
}

/// The request [`hear`] makes.
pub fn request<'a>(
    samples: &'a [f32],
    vad: bool,
    language: &str,
    task: Task,
    words: bool,
) -> EngineRequest<'a> {
    EngineRequest {
        samples,
        chunks: vad::chunks_to_hear(samples, vad),
        trimmed_to_speech: vad,
        language: LanguageChoice::Exact(language.into()),
        task,
        initial_prompt: None,
        words,
        cancel: Cancel::new(),
        calls_at_once: 1,
        provisional: false,
        said_before: None,
    }
}
