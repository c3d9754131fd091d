//! The language a request is decoded in: English for English-only models, the one given, or
//! detected (among a shortlist, or among all) from the first chunk. Detection runs on a decoder
//! state that has only ever had the full window: whisper.cpp detects through the window the
//! state last used, so a pooled state that has run a fitted window would make the same audio
//! detect differently from one request to the next.

use whisper_rs::WhisperState;

use super::super::{EngineError, EngineRequest, LanguageChoice};

/// What a request says about its language.
pub(super) enum Requested {
    Known(String),
    /// Detect among these (whisper id, code), or among every language when None.
    Detect(Option<Vec<(i32, String)>>),
}

/// The language `request` asks for on a model that is `multilingual` or not.
pub(super) fn requested(
    request: &EngineRequest<'_>,
    multilingual: bool,
) -> Result<Requested, EngineError> {
    if !multilingual {
        return Ok(Requested::Known("en".into()));
    }
    let known = |code: &String| {
        language_id(code)
            .map(|id| (id, code.to_ascii_lowercase()))
            .ok_or_else(|| EngineError::UnknownLanguage(code.clone()))
    };
    match &request.language {
        LanguageChoice::Auto => Ok(Requested::Detect(None)),
        LanguageChoice::Exact(code) => Ok(Requested::Known(known(code)?.1)),
        LanguageChoice::Shortlist(codes) => Ok(Requested::Detect(Some(
            codes.iter().map(known).collect::<Result<_, _>>()?,
        ))),
    }
}

/// The most probable language of `samples` (among `among` when given), judged through the
/// full window of `clean`, a state that has never run a fitted one.
pub(super) fn detect(
    clean: &mut WhisperState,
    samples: &[f32],
    among: Option<&[(i32, String)]>,
    threads: usize,
) -> Result<String, EngineError> {
    let failed = |e: whisper_rs::WhisperError| EngineError::Failed(e.to_string());
    clean.pcm_to_mel(samples, threads).map_err(failed)?;
    let (best, probabilities) = clean.lang_detect(0, threads).map_err(failed)?;
    let probability = |id: i32| probabilities.get(id as usize).copied().unwrap_or(0.0);
    let chosen = match among {
        None => whisper_rs::get_lang_str(best).map(str::to_string),
        Some(candidates) => candidates
            .iter()
            .max_by(|a, b| probability(a.0).total_cmp(&probability(b.0)))
            .map(|(_, code)| code.clone()),
    };
    chosen.ok_or_else(|| EngineError::Failed("language detection gave no language".into()))
}

/// A language code whisper knows, checked without handing odd bytes to C.
fn language_id(code: &str) -> Option<i32> {
    if code.is_empty() || code.len() > 8 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    whisper_rs::get_lang_id(&code.to_ascii_lowercase())
}
