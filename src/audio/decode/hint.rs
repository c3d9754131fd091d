//! The caller's format hint (a file extension or MIME type): normalised, mapped to an extension
//! the probe knows, or recognised as a format that is known not to be supported. Also what the
//! HTTP layer needs to turn its inputs into hints: [`hint_for_mime`] and [`FILE_EXTENSIONS`].

/// A format a hint can name.
struct Format {
    /// File extensions and MIME subtypes that name it.
    names: &'static [&'static str],
    /// The extension to give the probe (for an unsupported format: its usual extension).
    ext: &'static str,
    /// For a format that cannot be decoded, its display name.
    unsupported: Option<&'static str>,
}

const fn supported(names: &'static [&'static str], ext: &'static str) -> Format {
    Format {
        names,
        ext,
        unsupported: None,
    }
}

const fn unsupported(
    names: &'static [&'static str],
    ext: &'static str,
    name: &'static str,
) -> Format {
    Format {
        names,
        ext,
        unsupported: Some(name),
    }
}

const FORMATS: &[Format] = &[
    supported(&["wav", "wave", "x-wav", "vnd.wave", "x-pn-wav"], "wav"),
    supported(
        &[
            "mp3", "mpeg", "mpeg3", "x-mpeg", "x-mp3", "x-mpeg-3", "mpga",
        ],
        "mp3",
    ),
    supported(&["flac", "x-flac"], "flac"),
    supported(&["ogg", "oga", "x-ogg", "vorbis"], "ogg"),
    supported(&["opus"], "opus"),
    supported(&["m4a", "x-m4a", "mp4a-latm", "alac"], "m4a"),
    supported(&["mp4", "m4v", "m4b"], "mp4"),
    supported(&["mov", "quicktime"], "mov"),
    supported(&["aac", "aacp", "x-aac", "adts"], "aac"),
    supported(&["webm", "weba", "x-webm"], "webm"),
    supported(&["mkv", "mka", "x-matroska", "matroska"], "mkv"),
    supported(&["aiff", "aif", "aifc", "x-aiff"], "aiff"),
    supported(&["caf", "x-caf"], "caf"),
    unsupported(&["wma", "x-ms-wma", "asf"], "wma", "Windows Media Audio"),
    unsupported(&["amr", "3gpp", "3gp", "3gpp2", "3g2"], "amr", "AMR/3GPP"),
    unsupported(&["ac3", "eac3"], "ac3", "Dolby Digital (AC-3)"),
    unsupported(&["avi", "x-msvideo"], "avi", "AVI"),
];

/// Every file extension the local-file route should accept: the formats that decode, and a few
/// that are refused with their name (WMA, AVI) rather than as unknown files.
pub const FILE_EXTENSIONS: &[&str] = &[
    "wav", "mp3", "m4a", "flac", "aac", "ogg", "oga", "opus", "wma", "mp4", "mov", "mkv", "mka",
    "webm", "weba", "aiff", "aif", "aifc", "caf", "avi",
];

/// The format hint for a MIME type as clients send it (`audio/webm`,
/// `audio/ogg; codecs=opus`, `video/x-matroska`, ...): the extension the decoder takes, or None
/// for a MIME type that names no audio or video format it knows.
pub fn hint_for_mime(mime: &str) -> Option<&'static str> {
    let essence = mime.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, subtype) = essence.split_once('/')?;
    let known_kind = match kind {
        "audio" | "video" => true,
        "application" => matches!(subtype, "ogg" | "x-ogg"),
        _ => false,
    };
    if !known_kind {
        return None;
    }
    find(subtype.trim()).map(|f| f.ext)
}

fn find(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.names.contains(&name))
}

/// Lower-cases a hint and reduces a MIME type ("audio/x-wav") to its subtype ("x-wav").
pub(super) fn normalize_hint(hint: &str) -> String {
    let hint = hint.trim();
    let hint = hint.split(';').next().unwrap_or(hint);
    let hint = hint.rsplit('/').next().unwrap_or(hint).trim();
    hint.trim_start_matches('.').to_ascii_lowercase()
}

/// Maps a normalized hint to a file extension symphonia knows, and tells whether the hint
/// names a format that is known not to be supported (returned as its display name).
pub(super) fn classify_hint(hint: &str) -> (Option<&'static str>, Option<&'static str>) {
    match find(hint) {
        Some(f) if f.unsupported.is_none() => (Some(f.ext), None),
        Some(f) => (None, f.unsupported),
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_normalized() {
        assert_eq!(normalize_hint("audio/x-WAV"), "x-wav");
        assert_eq!(normalize_hint(".MP3"), "mp3");
        assert_eq!(normalize_hint("audio/mpeg; charset=binary"), "mpeg");
        assert_eq!(normalize_hint("audio/ogg;codecs=opus"), "ogg");
        assert_eq!(normalize_hint("audio/webm;codecs=\"opus\""), "webm");
        assert_eq!(classify_hint("mpeg").0, Some("mp3"));
        assert_eq!(classify_hint("wma").1, Some("Windows Media Audio"));
        assert_eq!(classify_hint("nonsense"), (None, None));
    }

    #[test]
    fn the_new_formats_are_supported() {
        for (hint, ext) in [
            ("webm", "webm"),
            ("weba", "webm"),
            ("mka", "mkv"),
            ("mkv", "mkv"),
            ("x-matroska", "mkv"),
            ("opus", "opus"),
            ("aiff", "aiff"),
            ("aif", "aiff"),
            ("x-aiff", "aiff"),
            ("caf", "caf"),
            ("x-caf", "caf"),
            ("alac", "m4a"),
        ] {
            assert_eq!(classify_hint(hint), (Some(ext), None), "{hint}");
        }
    }

    #[test]
    fn mime_types_browsers_and_tools_send() {
        for (mime, hint) in [
            ("audio/webm", Some("webm")),
            ("audio/webm;codecs=opus", Some("webm")),
            ("video/webm; codecs=\"vp8, opus\"", Some("webm")),
            ("audio/ogg;codecs=opus", Some("ogg")),
            ("audio/ogg; codecs=vorbis", Some("ogg")),
            ("application/ogg", Some("ogg")),
            ("audio/opus", Some("opus")),
            ("audio/aiff", Some("aiff")),
            ("audio/x-aiff", Some("aiff")),
            ("audio/x-caf", Some("caf")),
            ("audio/x-matroska", Some("mkv")),
            ("video/x-matroska", Some("mkv")),
            ("audio/mp4", Some("mp4")),
            ("audio/x-m4a", Some("m4a")),
            ("video/quicktime", Some("mov")),
            ("audio/mpeg", Some("mp3")),
            ("AUDIO/WAV", Some("wav")),
            ("audio/vnd.wave", Some("wav")),
            ("audio/flac", Some("flac")),
            ("audio/aac", Some("aac")),
            ("audio/x-ms-wma", Some("wma")),
            ("application/octet-stream", None),
            ("application/json", None),
            ("text/plain", None),
            ("audio/x-nonsense", None),
            ("webm", None),
            ("", None),
        ] {
            assert_eq!(hint_for_mime(mime), hint, "{mime}");
        }
    }

    #[test]
    fn every_accepted_extension_names_a_known_format() {
        for ext in FILE_EXTENSIONS {
            assert!(find(ext).is_some(), "{ext}");
            assert_eq!(normalize_hint(&format!(".{}", ext.to_uppercase())), *ext);
        }
        // Today's list, and the formats that now decode.
        for ext in [
            "wav", "mp3", "m4a", "flac", "aac", "ogg", "wma", "mp4", "mov", "mkv", "avi", "webm",
            "weba", "mka", "opus", "aiff", "aif", "caf",
        ] {
            assert!(FILE_EXTENSIONS.contains(&ext), "{ext}");
        }
    }
}
