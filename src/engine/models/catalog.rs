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

/// A model's display name: `Whisper Tiny`, or `Whisper Tiny (English)` with the tag `English`;
/// with a quantization, `Whisper Tiny (q5_1)` or `Whisper Tiny (English, q5_1)`.
macro_rules! display_name {
    ($name:literal, "") => {
        $name
    };
    ($name:literal, $tag:literal) => {
        concat!($name, " (", $tag, ")")
    };
    ($name:literal, "", $quant:ident) => {
        concat!($name, " (", stringify!($quant), ")")
    };
    ($name:literal, $tag:literal, $quant:ident) => {
        concat!($name, " (", $tag, ", ", stringify!($quant), ")")
    };
}

/// The catalog as families: a model, then its quantized variants (`q5_1 "31 MB"`: id
/// `<model>-q5_1`, the same name with the quantization, that size).
macro_rules! catalog {
    ($($id:literal $name:literal $tag:tt $size:literal $langs:expr
        => [$($quant:ident $quant_size:literal),*])*) => {
        &[$(
            ModelSpec {
                id: $id,
                name: display_name!($name, $tag),
                size_description: $size,
                language_count: $langs,
            },
            $(ModelSpec {
                id: concat!($id, "-", stringify!($quant)),
                name: display_name!($name, $tag, $quant),
                size_description: $quant_size,
                language_count: $langs,
            },)*
        )*]
    };
}

/// Every model of the whisper engine, smallest first.
pub const WHISPER_MODELS: &[ModelSpec] = catalog! {
    "tiny" "Whisper Tiny" "" "75 MB" MULTI => [q5_1 "31 MB", q8_0 "42 MB"]
    "tiny.en" "Whisper Tiny" "English" "75 MB" 1 => [q5_1 "31 MB", q8_0 "42 MB"]
    "base" "Whisper Base" "" "142 MB" MULTI => [q5_1 "57 MB", q8_0 "78 MB"]
    "base.en" "Whisper Base" "English" "142 MB" 1 => [q5_1 "57 MB", q8_0 "78 MB"]
    "small" "Whisper Small" "" "466 MB" MULTI => [q5_1 "181 MB", q8_0 "252 MB"]
    "small.en" "Whisper Small" "English" "466 MB" 1 => [q5_1 "181 MB", q8_0 "252 MB"]
    "medium" "Whisper Medium" "" "1.5 GB" MULTI => [q5_0 "514 MB", q8_0 "785 MB"]
    "medium.en" "Whisper Medium" "English" "1.5 GB" 1 => [q5_0 "514 MB", q8_0 "785 MB"]
    "large-v3" "Whisper Large v3" "" "2.9 GB" 100 => [q5_0 "1.1 GB"]
    "large-v3-turbo" "Whisper Large v3 Turbo" "" "1.5 GB" 100 => [q5_0 "547 MB", q8_0 "834 MB"]
};

/// Looks a whisper model up by id.
pub fn whisper_model(id: &str) -> Option<&'static ModelSpec> {
    WHISPER_MODELS.iter().find(|m| m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_families_expand_to_the_published_ids_names_and_sizes() {
        let shown = |id| {
            let m = whisper_model(id).unwrap();
            (m.name, m.size_description, m.language_count)
        };
        assert_eq!(WHISPER_MODELS.len(), 29);
        assert_eq!(shown("tiny"), ("Whisper Tiny", "75 MB", 99));
        assert_eq!(shown("tiny-q5_1"), ("Whisper Tiny (q5_1)", "31 MB", 99));
        assert_eq!(shown("base.en"), ("Whisper Base (English)", "142 MB", 1));
        assert_eq!(
            shown("medium.en-q8_0"),
            ("Whisper Medium (English, q8_0)", "785 MB", 1)
        );
        assert_eq!(
            shown("large-v3-turbo-q5_0"),
            ("Whisper Large v3 Turbo (q5_0)", "547 MB", 100)
        );
    }

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
