//! The header of a whisper.cpp ggml model file: the magic number and the hyper-parameters
//! whisper.cpp reads first. Enough to tell a Whisper model from any other file, and which
//! catalog model it is (size, English-only or multilingual, weight type), without loading it.

use std::io::Read;
use std::path::Path;

/// `ggml` as whisper.cpp writes it (little-endian).
pub const GGML_MAGIC: u32 = 0x6767_6d6c;

/// The hyper-parameters of a Whisper ggml file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlHeader {
    pub n_vocab: u32,
    pub n_audio_state: u32,
    pub n_audio_layer: u32,
    pub n_text_layer: u32,
    pub n_mels: u32,
    /// The weight type (`ftype` less whisper.cpp's quantization version): 0 f32, 1 f16,
    /// 7 q8_0, 9 q5_1, ...
    pub weight_type: u32,
}

impl GgmlHeader {
    /// Reads and checks the header of the file at `path`: a ggml file whose vocabulary, audio
    /// and text context and mel bands are a Whisper model's.
    pub fn read(path: &Path) -> Result<GgmlHeader, String> {
        let mut header = [0u8; 4 * 12];
        std::fs::File::open(path)
            .and_then(|mut file| file.read_exact(&mut header))
            .map_err(|e| format!("its header cannot be read ({e})"))?;
        let word = |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().unwrap());
        if word(0) != GGML_MAGIC {
            return Err("it is not a ggml file".into());
        }
        let (n_vocab, n_audio_ctx, n_text_ctx, n_mels) = (word(1), word(2), word(6), word(10));
        let plausible = (51_000..=52_000).contains(&n_vocab)
            && n_audio_ctx == 1500
            && n_text_ctx == 448
            && matches!(n_mels, 80 | 128);
        if !plausible {
            return Err(format!(
                "its header does not describe a Whisper model (vocabulary {n_vocab}, mel bands {n_mels})"
            ));
        }
        Ok(GgmlHeader {
            n_vocab,
            n_audio_state: word(3),
            n_audio_layer: word(5),
            n_text_layer: word(9),
            n_mels,
            // whisper.cpp stores GGML_QNT_VERSION * 1000 + the type.
            weight_type: word(11) % 1000,
        })
    }

    /// The catalog id this file is, by its shape: `tiny.en`, `base-q8_0`, `large-v3`... None
    /// for a shape or weight type the catalog has no name for.
    pub fn model_id(&self) -> Option<String> {
        let size = match (self.n_audio_state, self.n_audio_layer, self.n_mels) {
            (384, 4, 80) => "tiny",
            (512, 6, 80) => "base",
            (768, 12, 80) => "small",
            (1024, 24, 80) => "medium",
            (1280, 32, 128) if self.n_text_layer == 4 => "large-v3-turbo",
            (1280, 32, 128) => "large-v3",
            _ => return None,
        };
        let english = if self.n_vocab == 51_864 { ".en" } else { "" };
        let weights = match self.weight_type {
            1 => "",
            7 => "-q8_0",
            8 => "-q5_0",
            9 => "-q5_1",
            _ => return None,
        };
        Some(format!("{size}{english}{weights}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(words: &[u32]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(file.path(), bytes).unwrap();
        file
    }

    #[test]
    fn a_whisper_header_names_its_model() {
        // tiny.en q8_0 as whisper.cpp's quantizer writes it (quantization version 2).
        let tiny = file_with(&[GGML_MAGIC, 51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 2007]);
        let header = GgmlHeader::read(tiny.path()).unwrap();
        assert_eq!(header.model_id().as_deref(), Some("tiny.en-q8_0"));
        let base = file_with(&[GGML_MAGIC, 51865, 1500, 512, 8, 6, 448, 512, 8, 6, 80, 1]);
        let header = GgmlHeader::read(base.path()).unwrap();
        assert_eq!(header.model_id().as_deref(), Some("base"));
        let odd = file_with(&[GGML_MAGIC, 51865, 1500, 640, 8, 6, 448, 512, 8, 6, 80, 1]);
        assert_eq!(GgmlHeader::read(odd.path()).unwrap().model_id(), None);
    }

    #[test]
    fn other_files_are_refused_with_the_reason() {
        let text = file_with(&[0x6c6c_6548; 12]);
        assert_eq!(
            GgmlHeader::read(text.path()).unwrap_err(),
            "it is not a ggml file"
        );
        let other = file_with(&[GGML_MAGIC, 32000, 4096, 0, 0, 0, 2048, 0, 0, 0, 0, 1]);
        assert!(
            GgmlHeader::read(other.path())
                .unwrap_err()
                .contains("does not describe a Whisper model")
        );
        let short = file_with(&[GGML_MAGIC]);
        assert!(
            GgmlHeader::read(short.path())
                .unwrap_err()
                .contains("cannot be read")
        );
    }
}
