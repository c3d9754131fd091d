//! The Opus identification header ("OpusHead", RFC 7845 §5.1): what Ogg and Matroska carry as
//! the codec's extra data, read into what the decoder needs.

use symphonia::core::codecs::CodecParameters;

use super::libopus::StreamMap;

/// Most channels decoded: family 1 defines layouts up to eight (7.1); family 255 could carry
/// up to 255 channels, far past any speech recording.
pub(super) const MAX_CHANNELS: u8 = 8;

/// How the header's channels come out of the packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Streams {
    /// Channel mapping family 0: one stream, mono or stereo.
    Single,
    /// Families 1 and 255: several streams mapped to the channels.
    Multi(StreamMap),
}

/// The fields of an identification header that decoding needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OpusHead {
    pub channels: u8,
    /// Frames (at 48 kHz) to drop from the start of the decoded stream.
    pub pre_skip: u16,
    /// Gain to apply to the output, in Q7.8 dB.
    pub output_gain: i16,
    pub streams: Streams,
}

/// Why a header cannot be used: malformed, or a form this decoder does not handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeadError {
    Malformed(&'static str),
    Unsupported(&'static str),
}

impl OpusHead {
    /// Reads an identification header.
    pub(super) fn parse(bytes: &[u8]) -> Result<Self, HeadError> {
        use HeadError::{Malformed, Unsupported};
        if bytes.len() < 19 || &bytes[..8] != b"OpusHead" {
            return Err(Malformed("opus: missing or short identification header"));
        }
        // Only the major version (upper nibble) 0 is defined; minor versions stay compatible.
        if bytes[8] >> 4 != 0 {
            return Err(Unsupported("Opus with an unknown header version"));
        }
        let channels = bytes[9];
        let pre_skip = u16::from_le_bytes([bytes[10], bytes[11]]);
        let output_gain = i16::from_le_bytes([bytes[16], bytes[17]]);
        let family = bytes[18];
        if channels == 0 {
            return Err(Malformed("opus: zero channels"));
        }
        let streams = match family {
            0 if channels <= 2 => Streams::Single,
            0 => {
                return Err(Malformed(
                    "opus: more than two channels in mapping family 0",
                ));
            }
            1 | 255 => Streams::Multi(stream_map(&bytes[19..], channels)?),
            _ => return Err(Unsupported("Opus with an unknown channel mapping family")),
        };
        if channels > MAX_CHANNELS {
            return Err(Unsupported("Opus with more than 8 channels"));
        }
        Ok(OpusHead {
            channels,
            pre_skip,
            output_gain,
            streams,
        })
    }

    /// The header from a track's parameters: its extra data, or where a container gave none,
    /// a mono or stereo stream with the container's delay as pre-skip.
    pub(super) fn from_params(params: &CodecParameters) -> Result<Self, HeadError> {
        if let Some(extra) = params.extra_data.as_deref() {
            return Self::parse(extra);
        }
        let channels = params.channels.map_or(1, |c| c.count());
        if !(1..=2).contains(&channels) {
            return Err(HeadError::Malformed(
                "opus: no identification header for a multichannel stream",
            ));
        }
        Ok(OpusHead {
            channels: channels as u8,
            pre_skip: params.delay.unwrap_or(0).min(u32::from(u16::MAX)) as u16,
            output_gain: 0,
            streams: Streams::Single,
        })
    }

    /// The output gain as a factor.
    pub(super) fn gain_factor(&self) -> f32 {
        10f32.powf(f32::from(self.output_gain) / (256.0 * 20.0))
    }
}

/// The stream count, coupled count and channel mapping that follow the family byte.
fn stream_map(table: &[u8], channels: u8) -> Result<StreamMap, HeadError> {
    let channels = usize::from(channels);
    if table.len() < 2 + channels {
        return Err(HeadError::Malformed(
            "opus: channel mapping table cut short",
        ));
    }
    let (streams, coupled) = (table[0], table[1]);
    if streams == 0 || coupled > streams {
        return Err(HeadError::Malformed("opus: invalid stream counts"));
    }
    let mapping = table[2..2 + channels].to_vec();
    let decoded = u16::from(streams) + u16::from(coupled);
    if mapping.iter().any(|&m| m != 255 && u16::from(m) >= decoded) {
        return Err(HeadError::Malformed(
            "opus: channel mapped to a missing stream",
        ));
    }
    Ok(StreamMap {
        streams,
        coupled,
        mapping,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(channels: u8, pre_skip: u16, gain: i16, family: u8, table: &[u8]) -> Vec<u8> {
        let mut h = b"OpusHead".to_vec();
        h.push(1);
        h.push(channels);
        h.extend_from_slice(&pre_skip.to_le_bytes());
        h.extend_from_slice(&48_000u32.to_le_bytes());
        h.extend_from_slice(&gain.to_le_bytes());
        h.push(family);
        h.extend_from_slice(table);
        h
    }

    #[test]
    fn mono_and_stereo_headers() {
        let mono = OpusHead::parse(&head(1, 312, 0, 0, &[])).unwrap();
        assert_eq!(
            (mono.channels, mono.pre_skip, &mono.streams),
            (1, 312, &Streams::Single)
        );
        assert_eq!(mono.gain_factor(), 1.0);
        let stereo = OpusHead::parse(&head(2, 3840, -1536, 0, &[])).unwrap();
        assert_eq!(stereo.channels, 2);
        // -6 dB in Q7.8 is about half the amplitude.
        assert!((stereo.gain_factor() - 0.501).abs() < 0.001);
    }

    #[test]
    fn multichannel_headers_carry_their_stream_map() {
        let surround = OpusHead::parse(&head(6, 312, 0, 1, &[4, 2, 0, 4, 1, 2, 3, 5])).unwrap();
        assert_eq!(
            surround.streams,
            Streams::Multi(StreamMap {
                streams: 4,
                coupled: 2,
                mapping: vec![0, 4, 1, 2, 3, 5]
            })
        );
    }

    #[test]
    fn bad_headers_are_refused() {
        use HeadError::{Malformed, Unsupported};
        let cases = [
            (b"OpusTags........................".to_vec(), true),
            (head(1, 0, 0, 0, &[])[..18].to_vec(), true),
            (head(0, 0, 0, 0, &[]), true),
            (head(3, 0, 0, 0, &[]), true),
            (head(6, 0, 0, 1, &[4, 2, 0, 4]), true), // mapping table cut short
            (head(2, 0, 0, 1, &[0, 0, 0, 1]), true), // no streams
            (head(2, 0, 0, 1, &[1, 0, 0, 1]), true), // channel 1 maps to stream 1 of 1
            (head(2, 0, 0, 2, &[1, 1, 0, 1]), false), // ambisonics
            (
                head(10, 0, 0, 255, &[10, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
                false,
            ),
        ];
        for (bytes, malformed) in cases {
            match OpusHead::parse(&bytes) {
                Err(Malformed(_)) if malformed => {}
                Err(Unsupported(_)) if !malformed => {}
                other => panic!("{bytes:?}: {other:?}"),
            }
        }
        let mut future = head(1, 0, 0, 0, &[]);
        future[8] = 0x10;
        assert!(matches!(OpusHead::parse(&future), Err(Unsupported(_))));
    }

    #[test]
    fn without_a_header_the_parameters_describe_the_stream() {
        use symphonia::core::audio::Channels;
        let mut params = CodecParameters::new();
        params
            .with_channels(Channels::FRONT_LEFT | Channels::FRONT_RIGHT)
            .with_delay(312);
        let head = OpusHead::from_params(&params).unwrap();
        assert_eq!((head.channels, head.pre_skip), (2, 312));
    }
}
