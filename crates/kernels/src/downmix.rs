//! Channel mixing: each buffer symphonia decodes is averaged down to mono `f32`, and float
//! samples are made safe for the resampler. symphonia's sample conversions are generic, so
//! they run at this crate's optimisation level.

use symphonia_core::audio::{AudioBuffer, AudioBufferRef, Signal};
use symphonia_core::conv::IntoSample;
use symphonia_core::sample::Sample;

/// Averages all channels of `buf` into `out` (cleared first). Float samples are sanitized
/// (see [`sanitize`]).
pub fn downmix(buf: &AudioBufferRef<'_>, out: &mut Vec<f32>) {
    match buf {
        AudioBufferRef::U8(b) => downmix_planes(b, out),
        AudioBufferRef::U16(b) => downmix_planes(b, out),
        AudioBufferRef::U24(b) => downmix_planes(b, out),
        AudioBufferRef::U32(b) => downmix_planes(b, out),
        AudioBufferRef::S8(b) => downmix_planes(b, out),
        AudioBufferRef::S16(b) => downmix_planes(b, out),
        AudioBufferRef::S24(b) => downmix_planes(b, out),
        AudioBufferRef::S32(b) => downmix_planes(b, out),
        AudioBufferRef::F32(b) => {
            downmix_planes(b, out);
            sanitize(out);
        }
        AudioBufferRef::F64(b) => {
            downmix_planes(b, out);
            sanitize(out);
        }
    }
}

fn downmix_planes<S>(buf: &AudioBuffer<S>, out: &mut Vec<f32>)
where
    S: Sample + IntoSample<f32>,
{
    out.clear();
    let channels = buf.spec().channels.count();
    if channels == 0 {
        return;
    }
    out.extend(buf.chan(0).iter().map(|&s| s.into_sample()));
    for ch in 1..channels {
        for (o, &s) in out.iter_mut().zip(buf.chan(ch)) {
            *o += IntoSample::<f32>::into_sample(s);
        }
    }
    if channels > 1 {
        let scale = 1.0 / channels as f32;
        out.iter_mut().for_each(|o| *o *= scale);
    }
}

/// Float streams carry no range guarantee: NaN becomes silence and everything is clipped to
/// full scale, so damaged data cannot overflow the resampler.
fn sanitize(samples: &mut [f32]) {
    for s in samples {
        *s = if s.is_nan() { 0.0 } else { s.clamp(-1.0, 1.0) };
    }
}
