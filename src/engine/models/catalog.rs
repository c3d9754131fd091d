//! The Whisper model catalog: ids, display names, sizes and languages of the ggml models
//! whisper.cpp publishes, and the file name each is stored under.

/// A model Verbatim knows how to get and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    pub id: &'static str,
    pub name: &'static str,
    pub size_description: &'static str,
    pub language_count: u32,
}

impl ModelSpec {
    /// English-only models (`.en`) cannot detect languages or translate.
    pub fn multilingual(&self) -> bool {
        self.language_count > 1
    }

    /// True when the model accepts the language `code` (or its English name, as whisper.cpp
    /// does): every model accepts every language whisper knows (English-only models then
    /// transcribe in English).
    pub fn knows_language(&self, code: &str) -> bool {
        super::languages::is_accepted_language(code)
    }

    /// The weights file in the models folder (and on the download server).
    pub fn file_name(&self) -> String {
        format!("ggml-{}.bin", self.id)
    }
}

const MULTI: u32 = 99;

macro_rules! model {
    ($id:literal, $name:literal, $size:literal, $langs:expr) => {
        ModelSpec {
            id: $id,
            name: $name,
            size_description: $size,
            language_count: $langs,
        }
    };
}

/// Every model of the whisper engine, smallest first.
pub const WHISPER_MODELS: &[ModelSpec] = &[
    model!("tiny", "Whisper Tiny", "75 MB", MULTI),
    model!("tiny-q5_1", "Whisper Tiny (q5_1)", "31 MB", MULTI),
    model!("tiny-q8_0", "Whisper Tiny (q8_0)", "42 MB", MULTI),
    model!("tiny.en", "Whisper Tiny (English)", "75 MB", 1),
    model!("tiny.en-q5_1", "Whisper Tiny (English, q5_1)", "31 MB", 1),
    model!("tiny.en-q8_0", "Whisper Tiny (English, q8_0)", "42 MB", 1),
    model!("base", "Whisper Base", "142 MB", MULTI),
    model!("base-q5_1", "Whisper Base (q5_1)", "57 MB", MULTI),
    model!("base-q8_0", "Whisper Base (q8_0)", "78 MB", MULTI),
    model!("base.en", "Whisper Base (English)", "142 MB", 1),
    model!("base.en-q5_1", "Whisper Base (English, q5_1)", "57 MB", 1),
    model!("base.en-q8_0", "Whisper Base (English, q8_0)", "78 MB", 1),
    model!("small", "Whisper Small", "466 MB", MULTI),
    model!("small-q5_1", "Whisper Small (q5_1)", "181 MB", MULTI),
    model!("small-q8_0", "Whisper Small (q8_0)", "252 MB", MULTI),
    model!("small.en", "Whisper Small (English)", "466 MB", 1),
    model!(
        "small.en-q5_1",
        "Whisper Small (English, q5_1)",
        "181 MB",
        1
    ),
    model!(
        "small.en-q8_0",
        "Whisper Small (English, q8_0)",
        "252 MB",
        1
    ),
    model!("medium", "Whisper Medium", "1.5 GB", MULTI),
    model!("medium-q5_0", "Whisper Medium (q5_0)", "514 MB", MULTI),
    model!("medium-q8_0", "Whisper Medium (q8_0)", "785 MB", MULTI),
    model!("medium.en", "Whisper Medium (English)", "1.5 GB", 1),
    model!(
        "medium.en-q5_0",
        "Whisper Medium (English, q5_0)",
        "514 MB",
        1
    ),
    model!(
        "medium.en-q8_0",
        "Whisper Medium (English, q8_0)",
        "785 MB",
        1
    ),
    model!("large-v3", "Whisper Large v3", "2.9 GB", 100),
    model!("large-v3-q5_0", "Whisper Large v3 (q5_0)", "1.1 GB", 100),
    model!("large-v3-turbo", "Whisper Large v3 Turbo", "1.5 GB", 100),
    model!(
        "large-v3-turbo-q5_0",
        "Whisper Large v3 Turbo (q5_0)",
        "547 MB",
        100
    ),
    model!(
        "large-v3-turbo-q8_0",
        "Whisper Large v3 Turbo (q8_0)",
        "834 MB",
        100
    ),
];

/// Looks a whisper model up by id.
pub fn whisper_model(id: &str) -> Option<&'static ModelSpec> {
    WHISPER_MODELS.iter().find(|m| m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_english_models_are_monolingual() {
        let mut ids: Vec<_> = WHISPER_MODELS.iter().map(|m| m.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), WHISPER_MODELS.len());
        for m in WHISPER_MODELS {
            assert_eq!(m.id.contains(".en"), !m.multilingual(), "{}", m.id);
        }
        assert_eq!(
            whisper_model("tiny.en").unwrap().file_name(),
            "ggml-tiny.en.bin"
        );
        assert!(whisper_model("tiny.fr").is_none());
    }

    #[test]
    fn every_model_knows_every_whisper_language() {
        for m in WHISPER_MODELS {
            assert!(m.knows_language("en") && m.knows_language("Fr"), "{}", m.id);
            assert!(!m.knows_language("xx"), "{}", m.id);
        }
    }
}
