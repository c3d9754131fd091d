//! Device callbacks to mono `f32` chunks, with the samples lost in an overrun filled with
//! silence.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use ::cpal::{Data, FromSample, InputCallbackInfo, SampleFormat, SizedSample, StreamInstant};

use super::{Event, MAX_GAP};

/// Turns device callbacks into mono `f32` chunks; after an overrun, fills the samples the device
/// dropped with silence (from the capture timestamps) so the timeline stays intact.
pub(super) struct Downmix {
    channels: usize,
    rate: u32,
    next_capture: Option<StreamInstant>,
    overrun: Arc<AtomicBool>,
    events: Sender<Event>,
}

impl Downmix {
    /// Mixes `channels` channels at `rate` Hz; `overrun` is set when the device reports one.
    pub(super) fn new(
        channels: usize,
        rate: u32,
        overrun: Arc<AtomicBool>,
        events: Sender<Event>,
    ) -> Self {
        Downmix {
            channels,
            rate,
            next_capture: None,
            overrun,
            events,
        }
    }

    /// Sends the mono audio of one device callback (after silence for an overrun's gap).
    pub(super) fn push(&mut self, data: &Data, info: &InputCallbackInfo) {
        let frames = data.len() / self.channels;
        let mut out = Vec::with_capacity(frames);
        let capture = info.timestamp().capture;
        if self.overrun.swap(false, Ordering::Relaxed)
            && let Some(expected) = self.next_capture
            && let Some(gap) = capture.checked_duration_since(expected)
            && gap <= MAX_GAP
        {
            let missing = (gap.as_secs_f64() * f64::from(self.rate)).round() as usize;
            out.resize(missing, 0.0);
        }
        self.next_capture = capture.checked_add(Duration::from_secs_f64(
            frames as f64 / f64::from(self.rate),
        ));
        match data.sample_format() {
            SampleFormat::I8 => downmix::<i8>(data, self.channels, &mut out),
            SampleFormat::I16 => downmix::<i16>(data, self.channels, &mut out),
            SampleFormat::I24 => downmix::<::cpal::I24>(data, self.channels, &mut out),
            SampleFormat::I32 => downmix::<i32>(data, self.channels, &mut out),
            SampleFormat::I64 => downmix::<i64>(data, self.channels, &mut out),
            SampleFormat::U8 => downmix::<u8>(data, self.channels, &mut out),
            SampleFormat::U16 => downmix::<u16>(data, self.channels, &mut out),
            SampleFormat::U24 => downmix::<::cpal::U24>(data, self.channels, &mut out),
            SampleFormat::U32 => downmix::<u32>(data, self.channels, &mut out),
            SampleFormat::U64 => downmix::<u64>(data, self.channels, &mut out),
            SampleFormat::F32 => downmix::<f32>(data, self.channels, &mut out),
            SampleFormat::F64 => downmix::<f64>(data, self.channels, &mut out),
            // DSD bitstreams are not PCM; a capture device never offers them.
            _ => out.resize(out.len() + frames, 0.0),
        }
        if !out.is_empty() {
            let _ = self.events.send(Event::Samples(out));
        }
    }
}

/// Appends the mean of each frame's channels, as `f32`.
fn downmix<T>(data: &Data, channels: usize, out: &mut Vec<f32>)
where
    T: SizedSample,
    f32: FromSample<T>,
{
    let Some(samples) = data.as_slice::<T>() else {
        return;
    };
    if channels == 1 {
        out.extend(samples.iter().map(|&s| f32::from_sample_(s)));
        return;
    }
    let scale = 1.0 / channels as f32;
    out.extend(
        samples
            .chunks_exact(channels)
            .map(|frame| frame.iter().map(|&s| f32::from_sample_(s)).sum::<f32>() * scale),
    );
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn at(millis: u64) -> InputCallbackInfo {
        let instant = StreamInstant::from_millis(millis);
        InputCallbackInfo::new(::cpal::InputStreamTimestamp {
            callback: instant,
            capture: instant,
        })
    }

    fn data(samples: &[f32]) -> Data {
        // SAFETY: the pointer and length describe `samples`, which outlives the Data.
        unsafe {
            Data::from_parts(
                samples.as_ptr() as *mut (),
                samples.len(),
                SampleFormat::F32,
            )
        }
    }

    #[test]
    fn an_overrun_is_filled_with_the_silence_the_timestamps_show() {
        let (tx, rx) = mpsc::channel();
        let overrun = Arc::new(AtomicBool::new(false));
        let mut mono = Downmix {
            channels: 1,
            rate: 1_000,
            next_capture: None,
            overrun: Arc::clone(&overrun),
            events: tx,
        };
        let block = [0.5f32; 10];
        mono.push(&data(&block), &at(0));
        // Jitter without a reported overrun is not a gap.
        mono.push(&data(&block), &at(15));
        overrun.store(true, Ordering::Relaxed);
        // Expected at 25 ms, captured at 50 ms: 25 samples were dropped.
        mono.push(&data(&block), &at(50));
        let lengths: Vec<(usize, usize)> = rx
            .try_iter()
            .map(|event| match event {
                Event::Samples(s) => (s.len(), s.iter().filter(|&&x| x == 0.0).count()),
                Event::Lost(_) => panic!("not lost"),
            })
            .collect();
        assert_eq!(lengths, [(10, 0), (10, 0), (35, 25)]);
    }

    #[test]
    fn stereo_frames_are_averaged_and_integers_scaled() {
        let samples: Vec<i16> = vec![i16::MAX, 0, i16::MIN, i16::MIN, 0, 0];
        // SAFETY: the pointer and length describe `samples`, which outlives the Data.
        let data = unsafe {
            Data::from_parts(
                samples.as_ptr() as *mut (),
                samples.len(),
                SampleFormat::I16,
            )
        };
        let mut out = Vec::new();
        downmix::<i16>(&data, 2, &mut out);
        assert_eq!(out.len(), 3);
        assert!((out[0] - 0.5).abs() < 1e-3, "{out:?}");
        assert_eq!(out[1], -1.0);
        assert_eq!(out[2], 0.0);
    }
}
