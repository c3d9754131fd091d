//! Apple Lossless magic cookies as containers carry them, made into what symphonia's ALAC
//! decoder reads: the 24-byte `ALACSpecificConfig`, optionally followed by its 24-byte channel
//! layout. CAF files written by ffmpeg (and QuickTime-style writers) wrap it in `frma` and
//! `alac` atoms, which Apple's own decoder skips and symphonia's refuses.

use std::borrow::Cow;

use symphonia::core::codecs::{CODEC_TYPE_ALAC, CodecParameters};

/// Length of `ALACSpecificConfig`.
const CONFIG_LEN: usize = 24;
/// Length of the channel layout info that may follow it (an atom named `chan`).
const LAYOUT_LEN: usize = 24;

/// `params`, with an ALAC cookie unwrapped from its atoms where it was wrapped.
pub(super) fn with_plain_cookie(params: &CodecParameters) -> Cow<'_, CodecParameters> {
    let Some(cookie) = params.extra_data.as_deref() else {
        return Cow::Borrowed(params);
    };
    if params.codec != CODEC_TYPE_ALAC {
        return Cow::Borrowed(params);
    }
    let plain = plain_cookie(cookie);
    if plain.len() == cookie.len() {
        return Cow::Borrowed(params);
    }
    let mut params = params.clone();
    params.extra_data = Some(plain.into());
    Cow::Owned(params)
}

/// The frame length and channel count an ALAC track's cookie declares.
pub(super) fn frame_size(params: &CodecParameters) -> Option<(u64, u64)> {
    if params.codec != CODEC_TYPE_ALAC {
        return None;
    }
    let cookie = params.extra_data.as_deref()?;
    if cookie.len() < CONFIG_LEN {
        return None;
    }
    let frames = u32::from_be_bytes([cookie[0], cookie[1], cookie[2], cookie[3]]);
    Some((u64::from(frames), u64::from(cookie[9])))
}

/// The cookie without `frma` and `alac` atom headers in front, and without anything after the
/// config and its channel layout (a terminator atom).
fn plain_cookie(mut cookie: &[u8]) -> &[u8] {
    for atom in [b"frma", b"alac"] {
        if cookie.len() >= 12 + CONFIG_LEN && &cookie[4..8] == atom {
            // `frma` holds the format name, `alac` a version and flags: 12 bytes each.
            cookie = &cookie[12..];
        }
    }
    let with_layout = CONFIG_LEN + LAYOUT_LEN;
    if cookie.len() >= with_layout && &cookie[CONFIG_LEN + 4..CONFIG_LEN + 8] == b"chan" {
        &cookie[..with_layout]
    } else if cookie.len() > CONFIG_LEN {
        &cookie[..CONFIG_LEN]
    } else {
        cookie
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: [u8; 24] = [
        0, 0, 0x10, 0, 0, 16, 40, 10, 14, 1, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAC, 0x44,
    ];

    #[test]
    fn wrapped_cookies_are_unwrapped() {
        let mut wrapped = b"\0\0\0\x0cfrmaalac\0\0\0\x24alac\0\0\0\0".to_vec();
        wrapped.extend_from_slice(&CONFIG);
        assert_eq!(plain_cookie(&wrapped), CONFIG);
        // A terminator atom after the config goes too; a plain config stays as it is.
        let mut terminated = CONFIG.to_vec();
        terminated.extend_from_slice(b"\0\0\0\x08\0\0\0\0");
        assert_eq!(plain_cookie(&terminated), CONFIG);
        assert_eq!(plain_cookie(&CONFIG), CONFIG);
    }

    #[test]
    fn a_channel_layout_after_the_config_is_kept() {
        let mut with_layout = CONFIG.to_vec();
        with_layout.extend_from_slice(b"\0\0\0\x18chan\0\0\0\0\0\x64\0\x01\0\0\0\0\0\0\0\0");
        assert_eq!(plain_cookie(&with_layout), with_layout.as_slice());
    }

    #[test]
    fn the_frame_size_comes_from_the_cookie() {
        let mut params = CodecParameters::new();
        params
            .for_codec(CODEC_TYPE_ALAC)
            .with_extra_data(Box::new(CONFIG));
        assert_eq!(frame_size(&params), Some((4096, 1)));
    }
}
