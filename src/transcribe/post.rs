//! Text steps after the engine, in order: spoken numbers to digits (English only), snippets
//! (dictation), dictionary corrections last; and the prompt that carries the dictionary's terms.

use super::corrections::{Correction, apply_corrections};
use super::numbers::normalize_numbers;
use crate::store::{Store, StoreError, preferences};
use crate::wire::transcription::TranscribeOptions;

/// The post-processing steps with the preferences and dictionary of one request.
#[derive(Debug, Clone, Default)]
pub struct PostProcessing {
    pub normalize_numbers_default: bool,
    /// Snippet triggers and their text (dictation expands them; empty elsewhere).
    pub snippets: Vec<Correction>,
    pub corrections: Vec<Correction>,
    pub recognition_terms: Vec<String>,
}

impl PostProcessing {
    /// The number preference and the enabled dictionary (terms and corrections); the enabled
    /// snippets too when `with_snippets`.
    pub fn from_store(store: &Store, with_snippets: bool) -> Result<PostProcessing, StoreError> {
        let snippets = if with_snippets {
            store
                .snippets()?
                .into_iter()
                .filter(|s| s.enabled)
                .map(|s| Correction {
                    original: s.trigger,
                    replacement: s.text,
                    case_sensitive: false,
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(PostProcessing {
            normalize_numbers_default: store.pref_bool(&preferences::NORMALIZE_NUMBERS)?,
            snippets,
            corrections: store.enabled_corrections()?,
            recognition_terms: store.enabled_terms()?.into_iter().map(|t| t.term).collect(),
        })
    }

    /// The request prompt joined (newline) with the enabled recognition terms, written as a
    /// sentence: Whisper reads the prompt as the text that came before, and after a list left
    /// open ("Rajesh, Siobhan") it loops in short windows about twice as often as after a
    /// closed one ("Rajesh, Siobhan."): 9 chunks doubted against 4 on 21 short real clips, 3
    /// without a prompt (tiny.en, `scripts/bench-terms`).
    pub fn initial_prompt(&self, prompt: Option<&str>) -> Option<String> {
        let mut terms = self.recognition_terms.join(", ");
        if !terms.is_empty() && !terms.ends_with(['.', '!', '?']) {
            terms.push('.');
        }
        match (prompt.filter(|p| !p.trim().is_empty()), terms.is_empty()) {
            (None, true) => None,
            (Some(p), true) => Some(p.to_string()),
            (None, false) => Some(terms),
            (Some(p), false) => Some(format!("{p}\n{terms}")),
        }
    }

    /// Runs every step on `text`; `english`: the text is English (numbers apply).
    pub fn apply(&self, text: &str, english: bool, options: &TranscribeOptions) -> String {
        let mut text = text.to_string();
        if english
            && options
                .normalize_numbers
                .unwrap_or(self.normalize_numbers_default)
        {
            text = normalize_numbers(&text);
        }
        if !self.snippets.is_empty() {
            text = apply_corrections(&text, &self.snippets);
        }
        if options.apply_corrections.unwrap_or(true) && !self.corrections.is_empty() {
            text = apply_corrections(&text, &self.corrections);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_joined_with_the_terms_by_a_newline() {
        let mut post = PostProcessing::default();
        assert_eq!(
            post.initial_prompt(Some("Meeting notes")),
            Some("Meeting notes".into())
        );
        assert_eq!(post.initial_prompt(Some("  ")), None);
        post.recognition_terms = vec!["Verbatim".into(), "Kubernetes".into()];
        assert_eq!(
            post.initial_prompt(None),
            Some("Verbatim, Kubernetes.".into())
        );
        assert_eq!(
            post.initial_prompt(Some("Meeting notes")),
            Some("Meeting notes\nVerbatim, Kubernetes.".into())
        );
        post.recognition_terms = vec!["Yahoo!".into()];
        assert_eq!(post.initial_prompt(None), Some("Yahoo!".into()));
    }

    fn correction(original: &str, replacement: &str) -> Correction {
        Correction {
            original: original.into(),
            replacement: replacement.into(),
            case_sensitive: false,
        }
    }

    #[test]
    fn numbers_are_normalised_for_english_only_and_corrections_run_last() {
        let post = PostProcessing {
            normalize_numbers_default: true,
            corrections: vec![correction("25", "twenty-five")],
            ..PostProcessing::default()
        };
        let mut options = TranscribeOptions::default();
        assert_eq!(
            post.apply("twenty five cats", true, &options),
            "twenty-five cats"
        );
        assert_eq!(
            post.apply("twenty five cats", false, &options),
            "twenty five cats"
        );
        options.apply_corrections = Some(false);
        assert_eq!(post.apply("twenty five cats", true, &options), "25 cats");
        options.normalize_numbers = Some(false);
        assert_eq!(
            post.apply("twenty five cats", true, &options),
            "twenty five cats"
        );
    }

    #[test]
    fn snippets_expand_before_the_corrections() {
        let post = PostProcessing {
            snippets: vec![correction("my sig", "Kind regards, Ana")],
            corrections: vec![correction("Ana", "Anna")],
            ..PostProcessing::default()
        };
        let options = TranscribeOptions::default();
        assert_eq!(post.apply("my sig", true, &options), "Kind regards, Anna");
    }
}
