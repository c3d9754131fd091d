//! The caller's format hint (a file extension or MIME type): normalised, mapped to an extension
//! the probe knows, or recognised as a format that is known not to be supported.

/// Lower-cases a hint and reduces a MIME type ("audio/x-wav") to its subtype ("x-wav").
pub(super) fn normalize_hint(hint: &str) -> String {
    let hint = hint.trim();
    let hint = hint.rsplit('/').next().unwrap_or(hint);
    let hint = hint.split(';').next().unwrap_or(hint).trim();
    hint.trim_start_matches('.').to_ascii_lowercase()
}

/// Maps a normalized hint to a file extension symphonia knows, and tells whether the hint
/// names a format that is known not to be supported (returned as its display name).
pub(super) fn classify_hint(hint: &str) -> (Option<&'static str>, Option<&'static str>) {
    let ext = match hint {
        "wav" | "wave" | "x-wav" | "vnd.wave" | "x-pn-wav" => "wav",
        "mp3" | "mpeg" | "mpeg3" | "x-mpeg" | "x-mp3" | "mpga" => "mp3",
        "flac" | "x-flac" => "flac",
        "ogg" | "oga" | "x-ogg" | "vorbis" => "ogg",
        "m4a" | "x-m4a" | "mp4a-latm" => "m4a",
        "mp4" | "m4v" | "m4b" => "mp4",
        "mov" | "quicktime" => "mov",
        "aac" | "aacp" | "x-aac" | "adts" => "aac",
        "opus" => return (None, Some("Opus")),
        "webm" | "x-matroska" | "mkv" | "mka" => return (None, Some("WebM/Matroska")),
        "wma" | "x-ms-wma" | "asf" => return (None, Some("Windows Media Audio")),
        "amr" | "3gpp" | "3gp" | "3gpp2" | "3g2" => return (None, Some("AMR/3GPP")),
        "aiff" | "aif" | "x-aiff" => return (None, Some("AIFF")),
        "alac" => return (None, Some("Apple Lossless (ALAC)")),
        "ac3" | "eac3" => return (None, Some("Dolby Digital (AC-3)")),
        _ => return (None, None),
    };
    (Some(ext), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_normalized() {
        assert_eq!(normalize_hint("audio/x-WAV"), "x-wav");
        assert_eq!(normalize_hint(".MP3"), "mp3");
        assert_eq!(normalize_hint("audio/mpeg; charset=binary"), "mpeg");
        assert_eq!(classify_hint("mpeg").0, Some("mp3"));
        assert_eq!(classify_hint("opus").1, Some("Opus"));
        assert_eq!(classify_hint("nonsense"), (None, None));
    }
}
