//! Opus, which symphonia does not decode: a symphonia [`Decoder`] for `CODEC_TYPE_OPUS` over
//! the system libopus, registered beside symphonia's own codecs in [`codecs`].
//!
//! The decoder follows RFC 7845: the identification header (the codec's extra data in Ogg and
//! Matroska) gives the channel layout, the pre-skip (frames dropped from the start of the
//! stream, the encoder's delay) and an output gain; the output is always at 48 kHz. Mono and
//! stereo streams (mapping family 0) and multistream layouts of up to eight channels (families
//! 1 and 255) are decoded; other layouts are refused as unsupported. A packet libopus rejects
//! is a decode error for the packet loop to count, never a panic.

mod head;
mod libopus;

use std::sync::LazyLock;

use symphonia::core::audio::{
    AsAudioBufferRef, AudioBuffer, AudioBufferRef, Channels, Signal, SignalSpec,
};
use symphonia::core::codecs::{
    CODEC_TYPE_OPUS, CodecDescriptor, CodecParameters, CodecRegistry, Decoder, DecoderOptions,
    FinalizeResult,
};
use symphonia::core::errors::{Error, Result};
use symphonia::core::formats::Packet;
use symphonia::core::support_codec;

use head::{HeadError, OpusHead, Streams};
use libopus::{LibOpus, MAX_PACKET_FRAMES, SAMPLE_RATE};

/// symphonia's enabled codecs plus Opus.
pub(super) fn codecs() -> &'static CodecRegistry {
    static CODECS: LazyLock<CodecRegistry> = LazyLock::new(|| {
        let mut registry = CodecRegistry::new();
        symphonia::default::register_enabled_codecs(&mut registry);
        registry.register_all::<OpusDecoder>();
        registry
    });
    &CODECS
}

/// An Opus decoder (see the module docs).
pub(super) struct OpusDecoder {
    params: CodecParameters,
    head: OpusHead,
    libopus: LibOpus,
    gain: f32,
    /// Frames of the pre-skip still to drop.
    skip: usize,
    /// Interleaved output of libopus, room for the longest packet.
    pcm: Vec<f32>,
    buf: AudioBuffer<f32>,
}

impl OpusDecoder {
    fn open(head: &OpusHead) -> Result<LibOpus> {
        let opened = match &head.streams {
            Streams::Single => LibOpus::single(head.channels),
            Streams::Multi(map) => LibOpus::multistream(map),
        };
        opened.map_err(|e| Error::DecodeError(e.describe()))
    }
}

/// The channel mask of `count` channels: their positions in order (only the count matters to
/// the downmix that follows).
fn channel_mask(count: u8) -> Channels {
    Channels::from_bits_truncate((1u32 << count) - 1)
}

impl Decoder for OpusDecoder {
    fn try_new(params: &CodecParameters, _options: &DecoderOptions) -> Result<Self> {
        if params.codec != CODEC_TYPE_OPUS {
            return Err(Error::Unsupported("opus: not an Opus track"));
        }
        let head = OpusHead::from_params(params).map_err(|e| match e {
            HeadError::Malformed(what) => Error::DecodeError(what),
            HeadError::Unsupported(what) => Error::Unsupported(what),
        })?;
        let libopus = Self::open(&head)?;
        let spec = SignalSpec::new(SAMPLE_RATE, channel_mask(head.channels));
        Ok(OpusDecoder {
            params: params.clone(),
            gain: head.gain_factor(),
            skip: usize::from(head.pre_skip),
            pcm: vec![0.0; MAX_PACKET_FRAMES * libopus.channels()],
            buf: AudioBuffer::new(MAX_PACKET_FRAMES as u64, spec),
            head,
            libopus,
        })
    }

    fn supported_codecs() -> &'static [CodecDescriptor] {
        &[support_codec!(CODEC_TYPE_OPUS, "opus", "Opus")]
    }

    /// Starts afresh after a discontinuity (a seek); the pre-skip belongs to the stream's start
    /// and is not applied again.
    fn reset(&mut self) {
        if let Ok(libopus) = Self::open(&self.head) {
            self.libopus = libopus;
        }
    }

    fn codec_params(&self) -> &CodecParameters {
        &self.params
    }

    fn decode(&mut self, packet: &Packet) -> Result<AudioBufferRef<'_>> {
        self.buf.clear();
        let frames = self
            .libopus
            .decode(packet.buf(), &mut self.pcm)
            .map_err(|e| Error::DecodeError(e.describe()))?;
        self.buf.render_reserved(Some(frames));
        let channels = self.libopus.channels();
        for ch in 0..channels {
            let samples = self.pcm[..frames * channels]
                .iter()
                .skip(ch)
                .step_by(channels);
            for (out, &s) in self.buf.chan_mut(ch).iter_mut().zip(samples) {
                *out = s * self.gain;
            }
        }
        // The container's trim (Ogg's end-of-stream granule), then the stream's pre-skip.
        self.buf
            .trim(packet.trim_start() as usize, packet.trim_end() as usize);
        let skip = self.skip.min(self.buf.frames());
        self.buf.trim(skip, 0);
        self.skip -= skip;
        Ok(self.buf.as_audio_buffer_ref())
    }

    fn finalize(&mut self) -> FinalizeResult {
        FinalizeResult::default()
    }

    fn last_decoded(&self) -> AudioBufferRef<'_> {
        self.buf.as_audio_buffer_ref()
    }
}
