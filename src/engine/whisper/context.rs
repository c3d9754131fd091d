//! A loaded copy of a model: its whisper.cpp context, aligning tokens by DTW or not (a context
//! parameter, fixed at load), and its idle decoder states; and which alignment heads whisper.cpp
//! knows for each model.

use std::path::Path;
use std::sync::Mutex;

use whisper_rs::{
    DtwMode, DtwModelPreset, DtwParameters, WhisperContext, WhisperContextParameters, WhisperState,
};

use super::super::EngineError;
use super::lock;

/// A loaded copy of a model and its idle decoder states.
pub(super) struct Decoders {
    pub context: WhisperContext,
    pub idle: Mutex<Vec<WhisperState>>,
    /// Whether the context aligns tokens by DTW (see [`super::callbacks::DTW_MIN_CENTISECONDS`]).
    pub aligns: bool,
}

impl Decoders {
    /// `path`'s model, aligning tokens by DTW with the alignment heads `dtw` when given.
    pub fn load(path: &Path, dtw: Option<DtwModelPreset>) -> Result<Decoders, EngineError> {
        let aligns = dtw.is_some();
        let mut params = WhisperContextParameters::default();
        // Flash attention stays off: whisper.cpp cannot align tokens by DTW with it.
        params.flash_attn(false);
        if let Some(model_preset) = dtw {
            params.dtw_parameters(DtwParameters {
                mode: DtwMode::ModelPreset { model_preset },
                ..DtwParameters::default()
            });
        }
        let context =
            WhisperContext::new_with_params(path, params).map_err(|e| EngineError::Load {
                path: path.to_path_buf(),
                cause: e.to_string(),
            })?;
        Ok(Decoders {
            context,
            idle: Mutex::new(Vec::new()),
            aligns,
        })
    }

    /// A new state, whatever the pool holds: its random numbers start from the same seed.
    pub fn fresh_state(&self) -> Result<WhisperState, EngineError> {
        self.context
            .create_state()
            .map_err(|e| EngineError::Failed(format!("cannot create a decoder state: {e}")))
    }

    /// An idle state from `pool` (of this context), or a new one.
    pub fn state(&self, pool: &Mutex<Vec<WhisperState>>) -> Result<WhisperState, EngineError> {
        let popped = lock(pool).pop();
        match popped {
            Some(state) => Ok(state),
            None => self.fresh_state(),
        }
    }
}

/// whisper.cpp's alignment heads for the model `id` (its quantized variants share them).
pub(super) fn alignment_heads(id: &str) -> Option<DtwModelPreset> {
    let family = id.split_once("-q").map_or(id, |(family, _)| family);
    Some(match family {
        "tiny" => DtwModelPreset::Tiny,
        "tiny.en" => DtwModelPreset::TinyEn,
        "base" => DtwModelPreset::Base,
        "base.en" => DtwModelPreset::BaseEn,
        "small" => DtwModelPreset::Small,
        "small.en" => DtwModelPreset::SmallEn,
        "medium" => DtwModelPreset::Medium,
        "medium.en" => DtwModelPreset::MediumEn,
        "large-v3" => DtwModelPreset::LargeV3,
        "large-v3-turbo" => DtwModelPreset::LargeV3Turbo,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::catalog::WHISPER_MODELS;

    #[test]
    fn every_catalog_model_has_alignment_heads_shared_with_its_quantized_variants() {
        for spec in WHISPER_MODELS {
            assert!(alignment_heads(spec.id).is_some(), "{}", spec.id);
        }
        assert!(matches!(
            alignment_heads("large-v3-turbo-q5_0"),
            Some(DtwModelPreset::LargeV3Turbo)
        ));
        assert!(matches!(
            alignment_heads("tiny.en-q8_0"),
            Some(DtwModelPreset::TinyEn)
        ));
        assert!(alignment_heads("distil-large-v3").is_none());
    }
}
