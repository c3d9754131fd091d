//! Vocabulary loading, GPT-2 byte-level token decoding and the ordinary tokens a ggml file keeps.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Ct2Error;

/// Largest vocabulary or tokenizer file accepted (real ones are a few MiB).
const MAX_VOCAB_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest token id accepted from a tokenizer.json.
const MAX_TOKEN_ID: u64 = 1 << 20;

/// Ordinary (BPE) tokens before `<|endoftext|>` in English-only and multilingual vocabularies.
pub(super) const N_ORDINARY_EN: usize = 50256;
const N_ORDINARY_MULTILINGUAL: usize = 50257;
/// The end-of-text token; every token before it is an ordinary BPE token.
pub(super) const EOT_TOKEN: &str = "<|endoftext|>";

/// Tokens read from a CTranslate2 model directory.
pub(super) struct Vocabulary {
    pub path: PathBuf,
    /// Token strings by id. `None` for ids the file does not define.
    pub tokens: Vec<Option<String>>,
    /// Whether `tokens` is the model's full vocabulary (vocabulary.json / .txt),
    /// as opposed to the BPE part of a tokenizer.json.
    pub complete: bool,
}

impl Vocabulary {
    /// Loads `vocabulary.json`, else `vocabulary.txt`, else `tokenizer.json`.
    pub fn load(dir: &Path) -> Result<Self, Ct2Error> {
        let json = dir.join("vocabulary.json");
        if json.is_file() {
            let text = read_limited(&json)?;
            let list: Vec<String> =
                serde_json::from_str(&text).map_err(|e| Ct2Error::Vocabulary {
                    path: json.clone(),
                    reason: format!("expected a JSON list of strings ({e})"),
                })?;
            return Ok(Self {
                path: json,
                tokens: list.into_iter().map(Some).collect(),
                complete: true,
            });
        }
        let txt = dir.join("vocabulary.txt");
        if txt.is_file() {
            let text = read_limited(&txt)?;
            return Ok(Self {
                path: txt,
                tokens: parse_txt(&text),
                complete: true,
            });
        }
        let tok = dir.join("tokenizer.json");
        if tok.is_file() {
            let text = read_limited(&tok)?;
            let tokens = parse_tokenizer_json(&tok, &text)?;
            return Ok(Self {
                path: tok,
                tokens,
                complete: false,
            });
        }
        Err(Ct2Error::MissingVocabulary {
            dir: dir.to_path_buf(),
        })
    }

    /// Index of `<|endoftext|>`.
    pub fn eot_index(&self) -> Option<usize> {
        self.tokens
            .iter()
            .position(|t| t.as_deref() == Some(EOT_TOKEN))
    }

    /// Raw bytes of the first `count` tokens (the ordinary BPE tokens).
    pub fn ordinary_token_bytes(&self, count: usize) -> Result<Vec<Vec<u8>>, Ct2Error> {
        let mut out = Vec::with_capacity(count.min(self.tokens.len()));
        for id in 0..count {
            let Some(Some(token)) = self.tokens.get(id) else {
                return Err(Ct2Error::Vocabulary {
                    path: self.path.clone(),
                    reason: format!("token id {id} is not defined"),
                });
            };
            let bytes = token_to_bytes(token).ok_or_else(|| Ct2Error::Vocabulary {
                path: self.path.clone(),
                reason: format!(
                    "token {id} ({token:?}) has a character outside GPT-2's byte alphabet"
                ),
            })?;
            out.push(bytes);
        }
        Ok(out)
    }
}

/// Keeps `<|endoftext|>` and everything after it out: whisper.cpp names the
/// special and timestamp tokens itself.
pub(super) fn ordinary_tokens(
    vocab: &Vocabulary,
    n_vocab: usize,
    multilingual: bool,
) -> Result<Vec<Vec<u8>>, Ct2Error> {
    let bad = |reason: String| Ct2Error::Vocabulary {
        path: vocab.path.clone(),
        reason,
    };
    if vocab.complete && vocab.tokens.len() != n_vocab {
        return Err(bad(format!(
            "it has {} tokens but the model has {n_vocab}",
            vocab.tokens.len()
        )));
    }
    let expected = if multilingual {
        N_ORDINARY_MULTILINGUAL
    } else {
        N_ORDINARY_EN
    };
    match vocab.eot_index() {
        Some(i) if i == expected => {}
        Some(i) => {
            return Err(bad(format!(
                "`{}` is token {i}, but a {} model of {n_vocab} tokens has it at {expected}",
                EOT_TOKEN,
                if multilingual {
                    "multilingual"
                } else {
                    "English-only"
                }
            )));
        }
        None => return Err(bad(format!("it has no `{}` token", EOT_TOKEN))),
    }
    vocab.ordinary_token_bytes(expected)
}

fn read_limited(path: &Path) -> Result<String, Ct2Error> {
    let len = std::fs::metadata(path)
        .map_err(Ct2Error::reading(path))?
        .len();
    if len > MAX_VOCAB_FILE_BYTES {
        return Err(Ct2Error::Vocabulary {
            path: path.to_path_buf(),
            reason: format!("the file is {len} bytes, larger than any Whisper vocabulary"),
        });
    }
    let bytes = std::fs::read(path).map_err(Ct2Error::reading(path))?;
    String::from_utf8(bytes).map_err(|_| Ct2Error::Vocabulary {
        path: path.to_path_buf(),
        reason: "the file is not valid UTF-8".into(),
    })
}

/// One token per line. Empty lines are tokens too (the multilingual vocabulary
/// has an empty token at id 50256); only the final line terminator is dropped.
fn parse_txt(text: &str) -> Vec<Option<String>> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() && text.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|line| Some(line.strip_suffix('\r').unwrap_or(line).to_string()))
        .collect()
}

/// Reads the BPE vocabulary and added tokens of a Hugging Face tokenizer.json.
fn parse_tokenizer_json(path: &Path, text: &str) -> Result<Vec<Option<String>>, Ct2Error> {
    let bad = |reason: &str| Ct2Error::Vocabulary {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Ct2Error::Vocabulary {
            path: path.to_path_buf(),
            reason: format!("invalid JSON ({e})"),
        })?;
    let vocab = value
        .get("model")
        .and_then(|m| m.get("vocab"))
        .and_then(|v| v.as_object())
        .ok_or_else(|| bad("it has no model.vocab object"))?;
    let mut by_id: HashMap<u64, String> = HashMap::with_capacity(vocab.len());
    for (token, id) in vocab {
        let id = id
            .as_u64()
            .ok_or_else(|| bad("a model.vocab id is not a non-negative integer"))?;
        by_id.insert(id, token.clone());
    }
    if let Some(added) = value.get("added_tokens").and_then(|a| a.as_array()) {
        for entry in added {
            if let (Some(id), Some(content)) = (
                entry.get("id").and_then(|i| i.as_u64()),
                entry.get("content").and_then(|c| c.as_str()),
            ) {
                by_id.insert(id, content.to_string());
            }
        }
    }
    let max_id = by_id
        .keys()
        .copied()
        .max()
        .ok_or_else(|| bad("it defines no tokens"))?;
    if max_id > MAX_TOKEN_ID {
        return Err(bad(&format!(
            "token id {max_id} is far beyond any Whisper vocabulary"
        )));
    }
    let mut tokens = vec![None; max_id as usize + 1];
    for (id, token) in by_id {
        tokens[id as usize] = Some(token);
    }
    Ok(tokens)
}

/// GPT-2's `bytes_to_unicode`: byte value -> printable character.
fn byte_to_char_table() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..=255u8 {
        let printable =
            (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        table[b as usize] = if printable {
            char::from(b)
        } else {
            let c = char::from_u32(256 + n).unwrap_or('\0');
            n += 1;
            c
        };
    }
    table
}

/// Inverse of `bytes_to_unicode`: maps a byte-level token string back to bytes.
/// Returns `None` if a character is not one of the 256 byte characters.
pub(super) fn token_to_bytes(token: &str) -> Option<Vec<u8>> {
    static INVERSE: OnceLock<[Option<u8>; 324]> = OnceLock::new();
    let inverse = INVERSE.get_or_init(|| {
        // Characters produced by the table all lie below U+0144 (256 + 68).
        let mut inverse = [None::<u8>; 324];
        for (byte, c) in byte_to_char_table().iter().enumerate() {
            inverse[*c as usize] = Some(byte as u8);
        }
        inverse
    });
    token
        .chars()
        .map(|c| inverse.get(c as usize).copied().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_table_is_a_bijection_with_known_points() {
        let t = byte_to_char_table();
        let mut seen = std::collections::HashSet::new();
        for c in t {
            assert!(seen.insert(c));
        }
        assert_eq!(t[b' ' as usize], 'Ġ'); // U+0120
        assert_eq!(t[b'\n' as usize], 'Ċ'); // U+010A
        assert_eq!(t[0], 'Ā'); // U+0100
        assert_eq!(t[0xA0], 'ł'); // U+0142
        assert_eq!(t[0xAD], 'Ń'); // U+0143, the last remapped byte
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[0xE9], 'é');
    }

    #[test]
    fn reverses_gpt2_byte_strings() {
        assert_eq!(token_to_bytes("Ġthe").unwrap(), b" the");
        assert_eq!(token_to_bytes("ĊĊ").unwrap(), b"\n\n");
        assert_eq!(token_to_bytes("").unwrap(), b"");
        // "é" in UTF-8 is C3 A9, which GPT-2 spells "Ã©".
        assert_eq!(token_to_bytes("Ã©").unwrap(), "é".as_bytes());
        // Every byte round-trips.
        let table = byte_to_char_table();
        for b in 0..=255u8 {
            let s: String = [table[b as usize]].iter().collect();
            assert_eq!(token_to_bytes(&s).unwrap(), vec![b]);
        }
        // Characters outside the alphabet are rejected.
        assert!(token_to_bytes(" the").is_none());
        assert!(token_to_bytes("日本").is_none());
    }

    #[test]
    fn txt_keeps_empty_tokens() {
        assert_eq!(
            parse_txt("a\n\nb\n"),
            vec![Some("a".into()), Some(String::new()), Some("b".into())]
        );
        assert_eq!(
            parse_txt("a\r\nb"),
            vec![Some("a".into()), Some("b".into())]
        );
        assert!(parse_txt("").is_empty());
    }

    #[test]
    fn tokenizer_json_merges_added_tokens() {
        let text = r#"{"model":{"vocab":{"a":0,"Ġb":1}},"added_tokens":[{"id":3,"content":"<|endoftext|>"}]}"#;
        let t = parse_tokenizer_json(Path::new("tokenizer.json"), text).unwrap();
        assert_eq!(
            t,
            vec![
                Some("a".into()),
                Some("Ġb".into()),
                None,
                Some(EOT_TOKEN.into())
            ]
        );
        let huge = r#"{"model":{"vocab":{"a":999999999999}}}"#;
        assert!(parse_tokenizer_json(Path::new("tokenizer.json"), huge).is_err());
    }
}
