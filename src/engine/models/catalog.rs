//! What a model is (id, engine, display name, size, languages, what it can do) and the Whisper
//! catalog: the ggml models whisper.cpp publishes, the file name each is stored under, and the
//! SHA-256 and byte size every download is checked against (pinned here, never taken from the
//! server). Other engines keep their catalogs beside their code.

/// A model Verbatim knows how to get and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    pub id: &'static str,
    /// The engine that runs it (`whisper`, `moonshine`).
    pub engine: &'static str,
    pub name: &'static str,
    pub size_description: &'static str,
    pub language_count: u32,
    pub capabilities: Capabilities,
}

/// What a model can do beyond transcribing its languages (the contract's `capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Translation into English (the `translate` task).
    pub translate: bool,
    /// An initial prompt (the request's `prompt`) steers the decoding.
    pub prompt: bool,
    /// Timed words (`timestamp_granularities[]=word`).
    pub word_timestamps: bool,
    /// Fast enough for text while the user speaks.
    pub live: bool,
}

/// Whisper: everything but translation on English-only models.
const WHISPER_CAPABILITIES: Capabilities = Capabilities {
    translate: true,
    prompt: true,
    word_timestamps: true,
    live: true,
};

impl ModelSpec {
    /// English-only models (`.en`, Moonshine) cannot detect languages or translate.
    pub fn multilingual(&self) -> bool {
        self.language_count > 1
    }

    /// Translation into English: a multilingual model of an engine that translates.
    pub fn translates(&self) -> bool {
        self.multilingual() && self.capabilities.translate
    }

    /// True when the model transcribes the language `code` (or its English name, as
    /// whisper.cpp accepts): a multilingual whisper model every language whisper knows, an
    /// English-only model (`.en`, Moonshine) English alone, as `capabilities.languages` says.
    pub fn knows_language(&self, code: &str) -> bool {
        if self.engine == WHISPER_ENGINE && self.multilingual() {
            super::languages::is_accepted_language(code)
        } else {
            code.eq_ignore_ascii_case("en") || code.eq_ignore_ascii_case("english")
        }
    }

    /// The language codes the model transcribes, as `capabilities.languages` lists them.
    pub fn languages(&self) -> Vec<&'static str> {
        if self.multilingual() {
            super::languages::codes(self.language_count as usize).collect()
        } else {
            vec!["en"]
        }
    }

    /// The weights file in the models folder (and on the download server).
    pub fn file_name(&self) -> String {
        format!("ggml-{}.bin", self.id)
    }

    /// The SHA-256 and size of the published weights; None for a model without a pin, whose
    /// download must then be verified against a digest its server publishes.
    pub fn pin(&self) -> Option<Pin> {
        PINS.iter()
            .find(|(id, _, _)| *id == self.id)
            .map(|&(_, size, sha256)| Pin { sha256, size })
    }
}

/// The published weights of a model: its SHA-256 (lowercase hex) and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    pub sha256: &'static str,
    pub size: u64,
}

/// `(id, bytes, SHA-256)` of every `ggml-<id>.bin` in the whisper.cpp model repository on
/// Hugging Face (`ggerganov/whisper.cpp`, the default `modelDownloadBaseUrl`).
///
/// Sources: the SHA-256 is the Git LFS object id Hugging Face shows on each file's page
/// (`huggingface.co/ggerganov/whisper.cpp/blob/main/ggml-<id>.bin`, "Git LFS Details"); the byte
/// sizes are the `lfs.size` of the repository's tree listing at revision
/// 5359861c739e955e79d9a303bcbc70fb988958b1, as pinned by several independent projects, and agree
/// with the rounded size each file page shows. Every row was found in at least two sources that
/// agree; the file pages were read for all the quantized files, large-v3 and large-v3-turbo, and
/// the other rows agree across independent pinning projects (for tiny and tiny.en also Nix's SRI
/// hashes). A model whose weights are replaced upstream fails its check until this row changes.
const PINS: &[(&str, u64, &str)] = &[
    (
        "tiny",
        77_691_713,
        "be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21",
    ),
    (
        "tiny-q5_1",
        32_152_673,
        "818710568da3ca15689e31a743197b520007872ff9576237bda97bd1b469c3d7",
    ),
    (
        "tiny-q8_0",
        43_537_433,
        "c2085835d3f50733e2ff6e4b41ae8a2b8d8110461e18821b09a15c40c42d1cca",
    ),
    (
        "tiny.en",
        77_704_715,
        "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f",
    ),
    (
        "tiny.en-q5_1",
        32_166_155,
        "c77c5766f1cef09b6b7d47f21b546cbddd4157886b3b5d6d4f709e91e66c7c2b",
    ),
    (
        "tiny.en-q8_0",
        43_550_795,
        "5bc2b3860aa151a4c6e7bb095e1fcce7cf12c7b020ca08dcec0c6d018bb7dd94",
    ),
    (
        "base",
        147_951_465,
        "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe",
    ),
    (
        "base-q5_1",
        59_707_625,
        "422f1ae452ade6f30a004d7e5c6a43195e4433bc370bf23fac9cc591f01a8898",
    ),
    (
        "base-q8_0",
        81_768_585,
        "c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9",
    ),
    (
        "base.en",
        147_964_211,
        "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002",
    ),
    (
        "base.en-q5_1",
        59_721_011,
        "4baf70dd0d7c4247ba2b81fafd9c01005ac77c2f9ef064e00dcf195d0e2fdd2f",
    ),
    (
        "base.en-q8_0",
        81_781_811,
        "a4d4a0768075e13cfd7e19df3ae2dbc4a68d37d36a7dad45e8410c9a34f8c87e",
    ),
    (
        "small",
        487_601_967,
        "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b",
    ),
    (
        "small-q5_1",
        190_085_487,
        "ae85e4a935d7a567bd102fe55afc16bb595bdb618e11b2fc7591bc08120411bb",
    ),
    (
        "small-q8_0",
        264_464_607,
        "49c8fb02b65e6049d5fa6c04f81f53b867b5ec9540406812c643f177317f779f",
    ),
    (
        "small.en",
        487_614_201,
        "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d",
    ),
    (
        "small.en-q5_1",
        190_098_681,
        "bfdff4894dcb76bbf647d56263ea2a96645423f1669176f4844a1bf8e478ad30",
    ),
    (
        "small.en-q8_0",
        264_477_561,
        "67a179f608ea6114bd3fdb9060e762b588a3fb3bd00c4387971be4d177958067",
    ),
    (
        "medium",
        1_533_763_059,
        "6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208",
    ),
    (
        "medium-q5_0",
        539_212_467,
        "19fea4b380c3a618ec4723c3eef2eb785ffba0d0538cf43f8f235e7b3b34220f",
    ),
    (
        "medium-q8_0",
        823_369_779,
        "42a1ffcbe4167d224232443396968db4d02d4e8e87e213d3ee2e03095dea6502",
    ),
    (
        "medium.en",
        1_533_774_781,
        "cc37e93478338ec7700281a7ac30a10128929eb8f427dda2e865faa8f6da4356",
    ),
    (
        "medium.en-q5_0",
        539_225_533,
        "76733e26ad8fe1c7a5bf7531a9d41917b2adc0f20f2e4f5531688a8c6cd88eb0",
    ),
    (
        "medium.en-q8_0",
        823_382_461,
        "43fa2cd084de5a04399a896a9a7a786064e221365c01700cea4666005218f11c",
    ),
    (
        "large-v3",
        3_095_033_483,
        "64d182b440b98d5203c4f9bd541544d84c605196c4f7b845dfa11fb23594d1e2",
    ),
    (
        "large-v3-q5_0",
        1_081_140_203,
        "d75795ecff3f83b5faa89d1900604ad8c780abd5739fae406de19f23ecd98ad1",
    ),
    (
        "large-v3-turbo",
        1_624_555_275,
        "1fc70f774d38eb169993ac391eea357ef47c88757ef72ee5943879b7e8e2bc69",
    ),
    (
        "large-v3-turbo-q5_0",
        574_041_195,
        "394221709cd5ad1f40c46e6031ca61bce88931e6e088c188294c6d5a55ffa7e2",
    ),
    (
        "large-v3-turbo-q8_0",
        874_188_075,
        "317eb69c11673c9de1e1f0d459b253999804ec71ac4c23c17ecf5fbe24e259a1",
    ),
];

const MULTI: u32 = 99;

/// The engine id of the Whisper models.
pub const WHISPER_ENGINE: &str = "whisper";

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
                engine: WHISPER_ENGINE,
                name: display_name!($name, $tag),
                size_description: $size,
                language_count: $langs,
                capabilities: WHISPER_CAPABILITIES,
            },
            $(ModelSpec {
                id: concat!($id, "-", stringify!($quant)),
                engine: WHISPER_ENGINE,
                name: display_name!($name, $tag, $quant),
                size_description: $quant_size,
                language_count: $langs,
                capabilities: WHISPER_CAPABILITIES,
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
    fn every_model_is_pinned_to_a_digest_and_a_size_near_the_one_shown() {
        let mut pinned: Vec<_> = PINS.iter().map(|(id, _, _)| *id).collect();
        pinned.sort();
        pinned.dedup();
        assert_eq!(pinned.len(), PINS.len(), "one row per model");
        for m in WHISPER_MODELS {
            let pin = m.pin().unwrap_or_else(|| panic!("{} has no pin", m.id));
            assert_eq!(pin.sha256.len(), 64, "{}", m.id);
            assert!(
                pin.sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
            // The shown size is in MiB or GiB ("75 MB" is 75 MiB); a swapped row shows here.
            let (number, unit) = m.size_description.split_once(' ').unwrap();
            let unit: f64 = if unit == "GB" {
                1024.0 * 1024.0 * 1024.0
            } else {
                1024.0 * 1024.0
            };
            let shown = number.parse::<f64>().unwrap() * unit;
            let ratio = pin.size as f64 / shown;
            assert!(
                (0.9..1.1).contains(&ratio),
                "{}: {} vs {}",
                m.id,
                pin.size,
                m.size_description
            );
        }
        for (id, _, _) in PINS {
            assert!(
                whisper_model(id).is_some(),
                "{id} is pinned but not in the catalog"
            );
        }
        let digests: std::collections::HashSet<_> = PINS.iter().map(|p| p.2).collect();
        assert_eq!(digests.len(), PINS.len(), "no two models share weights");
    }

    #[test]
    fn multilingual_models_know_every_whisper_language_and_english_only_ones_english() {
        for m in WHISPER_MODELS {
            assert!(
                m.knows_language("en") && m.knows_language("English"),
                "{}",
                m.id
            );
            assert_eq!(m.knows_language("Fr"), m.multilingual(), "{}", m.id);
            assert!(!m.knows_language("xx"), "{}", m.id);
        }
    }
}
