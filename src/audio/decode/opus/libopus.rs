//! The part of the system libopus the decoder needs (through `opusic-sys`), behind a safe
//! interface: a single-stream or multistream decoder at 48 kHz that decodes one packet at a time
//! into an interleaved `f32` buffer. Every call into the library is in this file.

use std::ptr::NonNull;

use opusic_sys as ffi;

/// The rate libopus decodes at here, in Hz (Opus's native rate).
pub(super) const SAMPLE_RATE: u32 = 48_000;

/// Frames in the longest Opus packet (120 ms at 48 kHz).
pub(super) const MAX_PACKET_FRAMES: usize = 5_760;

/// A libopus error code (negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LibOpusError(pub i32);

impl LibOpusError {
    /// What the code means, in the words symphonia's errors take.
    pub(super) fn describe(self) -> &'static str {
        match self.0 {
            ffi::OPUS_BAD_ARG => "opus: invalid argument or packet",
            ffi::OPUS_BUFFER_TOO_SMALL => "opus: packet longer than 120 ms",
            ffi::OPUS_INVALID_PACKET => "opus: malformed packet",
            ffi::OPUS_ALLOC_FAIL => "opus: out of memory",
            _ => "opus: decoder failure",
        }
    }
}

/// How the streams of a multistream packet map to output channels (RFC 7845 §5.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StreamMap {
    pub streams: u8,
    pub coupled: u8,
    /// One entry per output channel: the decoded stream channel it takes, or 255 for silence.
    pub mapping: Vec<u8>,
}

enum State {
    Single(NonNull<ffi::OpusDecoder>),
    Multi(NonNull<ffi::OpusMSDecoder>),
}

/// A libopus decoder state, freed on drop.
pub(super) struct LibOpus {
    state: State,
    channels: usize,
}

// SAFETY: the decoder state is owned by this value alone and libopus keeps no thread-local or
// shared state for it; every call that touches it takes `&mut self`, so sharing `&LibOpus`
// across threads gives no access at all.
unsafe impl Send for LibOpus {}
unsafe impl Sync for LibOpus {}

impl LibOpus {
    /// A decoder of `channels` (1 or 2) channels from one Opus stream.
    pub(super) fn single(channels: u8) -> Result<Self, LibOpusError> {
        if !(1..=2).contains(&channels) {
            return Err(LibOpusError(ffi::OPUS_BAD_ARG));
        }
        let mut error = ffi::OPUS_OK;
        // SAFETY: plain arguments and a valid pointer to `error`; the result is checked.
        let ptr = unsafe {
            ffi::opus_decoder_create(SAMPLE_RATE as i32, i32::from(channels), &mut error)
        };
        match NonNull::new(ptr) {
            Some(ptr) if error == ffi::OPUS_OK => Ok(LibOpus {
                state: State::Single(ptr),
                channels: usize::from(channels),
            }),
            Some(ptr) => {
                // SAFETY: `ptr` came from opus_decoder_create and is not used again.
                unsafe { ffi::opus_decoder_destroy(ptr.as_ptr()) };
                Err(LibOpusError(error))
            }
            None => Err(LibOpusError(error.min(ffi::OPUS_ALLOC_FAIL))),
        }
    }

    /// A decoder of `map.mapping.len()` channels from the streams of a multistream packet.
    pub(super) fn multistream(map: &StreamMap) -> Result<Self, LibOpusError> {
        let channels = map.mapping.len();
        if !(1..=255).contains(&channels) {
            return Err(LibOpusError(ffi::OPUS_BAD_ARG));
        }
        let mut error = ffi::OPUS_OK;
        // SAFETY: libopus reads exactly `channels` entries of `mapping`, which has that many;
        // it validates the counts and the entries itself; the result is checked.
        let ptr = unsafe {
            ffi::opus_multistream_decoder_create(
                SAMPLE_RATE as i32,
                channels as i32,
                i32::from(map.streams),
                i32::from(map.coupled),
                map.mapping.as_ptr(),
                &mut error,
            )
        };
        match NonNull::new(ptr) {
            Some(ptr) if error == ffi::OPUS_OK => Ok(LibOpus {
                state: State::Multi(ptr),
                channels,
            }),
            Some(ptr) => {
                // SAFETY: `ptr` came from opus_multistream_decoder_create, not used again.
                unsafe { ffi::opus_multistream_decoder_destroy(ptr.as_ptr()) };
                Err(LibOpusError(error))
            }
            None => Err(LibOpusError(error.min(ffi::OPUS_ALLOC_FAIL))),
        }
    }

    /// Output channels.
    pub(super) fn channels(&self) -> usize {
        self.channels
    }

    /// Decodes `packet` into `pcm` (interleaved, at least [`MAX_PACKET_FRAMES`] frames long);
    /// returns the number of frames decoded. An empty packet is refused (libopus would take it
    /// for a lost one and conceal it).
    pub(super) fn decode(&mut self, packet: &[u8], pcm: &mut [f32]) -> Result<usize, LibOpusError> {
        let Ok(len) = i32::try_from(packet.len()) else {
            return Err(LibOpusError(ffi::OPUS_INVALID_PACKET));
        };
        if len == 0 {
            return Err(LibOpusError(ffi::OPUS_INVALID_PACKET));
        }
        assert!(
            pcm.len() >= MAX_PACKET_FRAMES * self.channels,
            "the output buffer holds the longest packet"
        );
        let frames = MAX_PACKET_FRAMES as i32;
        // SAFETY: the state is live (owned by self); libopus reads `len` bytes of `packet` and
        // writes at most `frames * channels` samples, which `pcm` holds (checked above).
        let decoded = unsafe {
            match self.state {
                State::Single(st) => ffi::opus_decode_float(
                    st.as_ptr(),
                    packet.as_ptr(),
                    len,
                    pcm.as_mut_ptr(),
                    frames,
                    0,
                ),
                State::Multi(st) => ffi::opus_multistream_decode_float(
                    st.as_ptr(),
                    packet.as_ptr(),
                    len,
                    pcm.as_mut_ptr(),
                    frames,
                    0,
                ),
            }
        };
        usize::try_from(decoded).map_err(|_| LibOpusError(decoded))
    }
}

impl Drop for LibOpus {
    fn drop(&mut self) {
        // SAFETY: the state came from the matching create call and is freed once, here.
        unsafe {
            match self.state {
                State::Single(st) => ffi::opus_decoder_destroy(st.as_ptr()),
                State::Multi(st) => ffi::opus_multistream_decoder_destroy(st.as_ptr()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_layouts_are_refused_by_the_library() {
        assert!(LibOpus::single(0).is_err());
        assert!(LibOpus::single(3).is_err());
        // Coupled streams beyond the stream count, a mapping entry past the streams.
        let bad = StreamMap {
            streams: 1,
            coupled: 2,
            mapping: vec![0, 1],
        };
        assert!(LibOpus::multistream(&bad).is_err());
        let bad = StreamMap {
            streams: 1,
            coupled: 0,
            mapping: vec![0, 7],
        };
        assert!(LibOpus::multistream(&bad).is_err());
    }

    #[test]
    fn garbage_and_empty_packets_are_errors() {
        let mut opus = LibOpus::single(1).unwrap();
        let mut pcm = vec![0.0; MAX_PACKET_FRAMES];
        assert!(opus.decode(&[], &mut pcm).is_err());
        // TOC code 3 (arbitrary frame count) with a frame count of zero: malformed.
        assert!(opus.decode(&[0x03, 0x00], &mut pcm).is_err());
        // A silent 20 ms CELT frame (TOC 0xF8 and no payload) decodes to 960 frames.
        assert_eq!(opus.decode(&[0xF8], &mut pcm), Ok(960));
    }

    #[test]
    fn multistream_decodes_every_channel() {
        // Family-1 5.1: four streams, two coupled.
        let map = StreamMap {
            streams: 4,
            coupled: 2,
            mapping: vec![0, 4, 1, 2, 3, 5],
        };
        let mut opus = LibOpus::multistream(&map).unwrap();
        assert_eq!(opus.channels(), 6);
        let mut pcm = vec![0.0; MAX_PACKET_FRAMES * 6];
        // Four self-delimited silent frames: each stream but the last carries a length byte.
        let packet = [0xF8, 0x00, 0xF8, 0x00, 0xF8, 0x00, 0xF8];
        assert_eq!(opus.decode(&packet, &mut pcm), Ok(960));
    }
}
