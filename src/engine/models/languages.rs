//! The languages whisper.cpp knows: ISO 639-1 style codes with their English names, in
//! whisper.cpp's order (`g_lang` in whisper.cpp 1.8), so a code's index is whisper's language id.

/// Every language whisper.cpp knows, `(code, English name)`, indexed by whisper's language id.
pub const WHISPER_LANGUAGES: &[(&str, &str)] = &[
    ("en", "English"),
    ("zh", "Chinese"),
    ("de", "German"),
    ("es", "Spanish"),
    ("ru", "Russian"),
    ("ko", "Korean"),
    ("fr", "French"),
    ("ja", "Japanese"),
    ("pt", "Portuguese"),
    ("tr", "Turkish"),
    ("pl", "Polish"),
    ("ca", "Catalan"),
    ("nl", "Dutch"),
    ("ar", "Arabic"),
    ("sv", "Swedish"),
    ("it", "Italian"),
    ("id", "Indonesian"),
    ("hi", "Hindi"),
    ("fi", "Finnish"),
    ("vi", "Vietnamese"),
    ("he", "Hebrew"),
    ("uk", "Ukrainian"),
    ("el", "Greek"),
    ("ms", "Malay"),
    ("cs", "Czech"),
    ("ro", "Romanian"),
    ("da", "Danish"),
    ("hu", "Hungarian"),
    ("ta", "Tamil"),
    ("no", "Norwegian"),
    ("th", "Thai"),
    ("ur", "Urdu"),
    ("hr", "Croatian"),
    ("bg", "Bulgarian"),
    ("lt", "Lithuanian"),
    ("la", "Latin"),
    ("mi", "Maori"),
    ("ml", "Malayalam"),
    ("cy", "Welsh"),
    ("sk", "Slovak"),
    ("te", "Telugu"),
    ("fa", "Persian"),
    ("lv", "Latvian"),
    ("bn", "Bengali"),
    ("sr", "Serbian"),
    ("az", "Azerbaijani"),
    ("sl", "Slovenian"),
    ("kn", "Kannada"),
    ("et", "Estonian"),
    ("mk", "Macedonian"),
    ("br", "Breton"),
    ("eu", "Basque"),
    ("is", "Icelandic"),
    ("hy", "Armenian"),
    ("ne", "Nepali"),
    ("mn", "Mongolian"),
    ("bs", "Bosnian"),
    ("kk", "Kazakh"),
    ("sq", "Albanian"),
    ("sw", "Swahili"),
    ("gl", "Galician"),
    ("mr", "Marathi"),
    ("pa", "Punjabi"),
    ("si", "Sinhala"),
    ("km", "Khmer"),
    ("sn", "Shona"),
    ("yo", "Yoruba"),
    ("so", "Somali"),
    ("af", "Afrikaans"),
    ("oc", "Occitan"),
    ("ka", "Georgian"),
    ("be", "Belarusian"),
    ("tg", "Tajik"),
    ("sd", "Sindhi"),
    ("gu", "Gujarati"),
    ("am", "Amharic"),
    ("yi", "Yiddish"),
    ("lo", "Lao"),
    ("uz", "Uzbek"),
    ("fo", "Faroese"),
    ("ht", "Haitian Creole"),
    ("ps", "Pashto"),
    ("tk", "Turkmen"),
    ("nn", "Nynorsk"),
    ("mt", "Maltese"),
    ("sa", "Sanskrit"),
    ("lb", "Luxembourgish"),
    ("my", "Myanmar"),
    ("bo", "Tibetan"),
    ("tl", "Tagalog"),
    ("mg", "Malagasy"),
    ("as", "Assamese"),
    ("tt", "Tatar"),
    ("haw", "Hawaiian"),
    ("ln", "Lingala"),
    ("ha", "Hausa"),
    ("ba", "Bashkir"),
    ("jw", "Javanese"),
    ("su", "Sundanese"),
    ("yue", "Cantonese"),
];

/// The table entry of `code` (case-insensitive); odd bytes and empty codes match nothing.
fn entry(code: &str) -> Option<&'static (&'static str, &'static str)> {
    if code.is_empty() || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    WHISPER_LANGUAGES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(code))
}

/// True when whisper.cpp knows the language `code` (case-insensitive, e.g. `en`, `FR`, `haw`).
pub fn is_known_language(code: &str) -> bool {
    entry(code).is_some()
}

/// What a language people write means to the engines: `auto` (or `detect`) is no language
/// (detect it), a region or script tag means its language (`en-US`, `pt_BR`, `zh-Hant` are
/// `en`, `pt`, `zh`), and a known code comes back in lower case. Anything else is left as
/// written, for the caller to refuse as unknown.
pub fn normalize_language(written: &str) -> Option<String> {
    let written = written.trim();
    if written.eq_ignore_ascii_case("auto") || written.eq_ignore_ascii_case("detect") {
        return None;
    }
    let base = written.split(['-', '_']).next().unwrap_or(written);
    match entry(base) {
        Some((code, _)) if base.len() < written.len() || entry(written).is_some() => {
            Some((*code).to_string())
        }
        _ => Some(written.to_string()),
    }
}

/// True when whisper.cpp takes `language` as a language: a code, or (as whisper.cpp also
/// accepts) its English name such as `german` (case-insensitive).
pub fn is_accepted_language(language: &str) -> bool {
    is_known_language(language)
        || WHISPER_LANGUAGES
            .iter()
            .any(|(_, name)| name.eq_ignore_ascii_case(language))
}

/// The codes of the first `count` languages in whisper's order (99 for most multilingual
/// models; large-v3 adds Cantonese as the 100th).
pub fn codes(count: usize) -> impl Iterator<Item = &'static str> {
    WHISPER_LANGUAGES.iter().take(count).map(|&(code, _)| code)
}

/// The English name of the language `code` (case-insensitive), e.g. `de` -> `German`.
pub fn language_name(code: &str) -> Option<&'static str> {
    entry(code).map(|&(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_are_found_whatever_their_case() {
        assert!(is_known_language("en"));
        assert!(is_known_language("FR"));
        assert!(is_known_language("haw"));
        assert!(is_known_language("yue"));
        assert_eq!(language_name("De"), Some("German"));
        assert_eq!(language_name("ht"), Some("Haitian Creole"));
    }

    #[test]
    fn names_are_accepted_as_whisper_accepts_them() {
        assert!(is_accepted_language("german") && is_accepted_language("DE"));
        assert!(!is_accepted_language("xx") && !is_accepted_language("klingon"));
    }

    #[test]
    fn unknown_or_odd_codes_are_refused() {
        for code in ["", "xx", "eng", "english", "e", "en ", "e\0", "fr-FR", "ès"] {
            assert!(!is_known_language(code), "{code:?}");
            assert_eq!(language_name(code), None, "{code:?}");
        }
    }

    #[test]
    fn codes_are_unique_lowercase_letters() {
        let mut codes: Vec<_> = WHISPER_LANGUAGES.iter().map(|(c, _)| *c).collect();
        assert!(
            codes
                .iter()
                .all(|c| c.bytes().all(|b| b.is_ascii_lowercase()))
        );
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), WHISPER_LANGUAGES.len());
    }

    /// The table agrees with the whisper.cpp this build links: same codes, same ids, same count.
    #[cfg(feature = "whisper")]
    #[test]
    fn the_table_is_whisper_cpps_own() {
        for (id, (code, _)) in WHISPER_LANGUAGES.iter().enumerate() {
            assert_eq!(whisper_rs::get_lang_id(code), Some(id as i32), "{code}");
        }
        let max_id = whisper_rs::get_lang_max_id();
        assert_eq!(WHISPER_LANGUAGES.len(), max_id as usize + 1);
    }

    #[test]
    fn auto_detects_and_region_tags_mean_their_language() {
        assert_eq!(normalize_language("auto"), None);
        assert_eq!(normalize_language(" AUTO "), None);
        assert_eq!(normalize_language("detect"), None);
        for (written, meant) in [
            ("en-US", "en"),
            ("pt_BR", "pt"),
            ("zh-Hant", "zh"),
            ("DE", "de"),
            ("fr", "fr"),
        ] {
            assert_eq!(
                normalize_language(written).as_deref(),
                Some(meant),
                "{written}"
            );
        }
        // Names and unknown codes are left for the caller to take or refuse.
        assert_eq!(normalize_language("german").as_deref(), Some("german"));
        assert_eq!(normalize_language("xx-YY").as_deref(), Some("xx-YY"));
    }
}
