//! The language of the desktop session the server runs in (`LC_ALL`, else `LC_MESSAGES`, else
//! `LANG`, as POSIX orders them): live text's first guess on a multilingual model with no
//! language given, before any live transcription on that model has settled one.

/// The session's language code from the process's environment, if its locale names one.
pub fn session_language() -> Option<String> {
    let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
    let locale = var("LC_ALL")
        .or_else(|| var("LC_MESSAGES"))
        .or_else(|| var("LANG"))?;
    language_of(&locale)
}

/// The language code of a locale name (`de_DE.UTF-8`, `pt_BR`, `sr@latin`) as Whisper spells
/// it (Norwegian Bokmål `nb` is its `no`, Javanese `jv` its `jw`): none for `C` and `POSIX`,
/// which name no language.
pub fn language_of(locale: &str) -> Option<String> {
    let name = locale.split(['.', '@']).next()?;
    let language = name.split(['_', '-']).next()?.to_ascii_lowercase();
    let letters =
        (2..=3).contains(&language.len()) && language.bytes().all(|b| b.is_ascii_alphabetic());
    if !letters || language == "c" || language == "posix" {
        return None;
    }
    Some(match language.as_str() {
        "nb" => "no".into(),
        "jv" => "jw".into(),
        _ => language,
    })
}

#[cfg(test)]
mod tests {
    use super::language_of;

    #[test]
    fn a_locale_names_its_language_and_c_names_none() {
        let of = language_of;
        assert_eq!(of("de_DE.UTF-8").as_deref(), Some("de"));
        assert_eq!(of("pt_BR").as_deref(), Some("pt"));
        assert_eq!(of("sr_RS@latin").as_deref(), Some("sr"));
        assert_eq!(of("fr").as_deref(), Some("fr"));
        assert_eq!(of("EN_us.utf8").as_deref(), Some("en"));
        assert_eq!(of("nb_NO.UTF-8").as_deref(), Some("no"));
        assert_eq!(of("nn_NO.UTF-8").as_deref(), Some("nn"));
        assert_eq!(of("jv_ID").as_deref(), Some("jw"));
        assert_eq!(of("C.UTF-8"), None);
        assert_eq!(of("C"), None);
        assert_eq!(of("POSIX"), None);
        assert_eq!(of(""), None);
        assert_eq!(of("1234"), None);
        assert_eq!(of("/etc/locale"), None);
    }
}
