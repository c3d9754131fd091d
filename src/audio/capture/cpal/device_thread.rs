//! The device thread: finds, configures and starts the device, then keeps its stream alive
//! until the capture is dropped; device errors are logged, and a loss is sent to the reader.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender};

use ::cpal::traits::{DeviceTrait, StreamTrait};
use ::cpal::{
    BufferSize, Data, Device, ErrorKind, InputCallbackInfo, SampleFormat, StreamConfig,
    SupportedBufferSize,
};

use super::devices::{device_description, device_name, find_microphone, find_system_audio, host};
use super::downmix::Downmix;
use super::{BUILD_TIMEOUT, Event, PERIOD, PREFERRED_RATE};
use crate::audio::capture::{CaptureError, SourceKind};

/// The device thread: opens the device, reports the outcome, then keeps the stream alive until
/// the [`CpalStream`](super::stream::CpalStream) is dropped (its stop sender disconnects).
pub(super) fn run_device(
    kind: SourceKind,
    preferred: Option<&str>,
    ready: SyncSender<Result<u32, CaptureError>>,
    events: Sender<Event>,
    stop: Receiver<()>,
) {
    match start(kind, preferred, events) {
        Ok((stream, rate)) => {
            if ready.send(Ok(rate)).is_ok() {
                // Returns when the sender is dropped; nothing is ever sent on it.
                let _ = stop.recv();
            }
            drop(stream);
        }
        Err(err) => {
            let _ = ready.send(Err(err));
        }
    }
}

fn open_failed(kind: SourceKind, err: ::cpal::Error) -> CaptureError {
    match err.kind() {
        ErrorKind::DeviceNotAvailable | ErrorKind::HostUnavailable => {
            tracing::info!("the {kind} is not available: {err}");
            CaptureError::NotAvailable { kind }
        }
        _ => CaptureError::OpenFailed {
            kind,
            reason: err.to_string(),
        },
    }
}

/// The stream configuration: the device's own channel count and sample format, at
/// [`PREFERRED_RATE`] when the device offers it, with [`PERIOD`]-long callbacks when it allows.
fn choose_config(device: &Device) -> Result<(StreamConfig, SampleFormat), ::cpal::Error> {
    let default = device.default_input_config()?;
    let (channels, format) = (default.channels(), default.sample_format());
    let offers_preferred = device.supported_input_configs()?.any(|range| {
        range.channels() == channels
            && range.sample_format() == format
            && range.min_sample_rate() <= PREFERRED_RATE
            && PREFERRED_RATE <= range.max_sample_rate()
    });
    let sample_rate = if offers_preferred {
        PREFERRED_RATE
    } else {
        default.sample_rate()
    };
    let frames = (u64::from(sample_rate) * PERIOD.as_millis() as u64 / 1000) as u32;
    let buffer_size = match *default.buffer_size() {
        SupportedBufferSize::Range { min, max } => BufferSize::Fixed(frames.clamp(min, max)),
        SupportedBufferSize::Unknown => BufferSize::Default,
    };
    let config = StreamConfig {
        channels,
        sample_rate,
        buffer_size,
    };
    Ok((config, format))
}

/// Finds and starts the device; returns the playing stream and its rate.
fn start(
    kind: SourceKind,
    preferred: Option<&str>,
    events: Sender<Event>,
) -> Result<(::cpal::Stream, u32), CaptureError> {
    let host = host().map_err(|err| open_failed(kind, err))?;
    let device = match kind {
        SourceKind::Microphone => find_microphone(&host, preferred),
        SourceKind::SystemAudio => find_system_audio(&host),
    }
    .ok_or_else(|| {
        tracing::info!("no {kind} on the {} host", host.id().name());
        CaptureError::NotAvailable { kind }
    })?;
    let (config, format) = choose_config(&device).map_err(|err| open_failed(kind, err))?;
    let mut stream = build(&device, &config, format, kind, events.clone());
    if let (Err(err), BufferSize::Fixed(_)) = (&stream, config.buffer_size)
        && err.kind() == ErrorKind::UnsupportedConfig
    {
        // Some ALSA devices refuse the period asked for; their own is good enough.
        let config = StreamConfig {
            buffer_size: BufferSize::Default,
            ..config
        };
        stream = build(&device, &config, format, kind, events);
    }
    let stream = stream.map_err(|err| open_failed(kind, err))?;
    stream.play().map_err(|err| open_failed(kind, err))?;
    tracing::info!(
        "capturing the {kind} from '{}' ({} on {}, {} Hz, {} channel(s), {format})",
        device_description(&device),
        device_name(&device),
        host.id().name(),
        config.sample_rate,
        config.channels,
    );
    Ok((stream, config.sample_rate))
}

fn build(
    device: &Device,
    config: &StreamConfig,
    format: SampleFormat,
    kind: SourceKind,
    events: Sender<Event>,
) -> Result<::cpal::Stream, ::cpal::Error> {
    let overrun = Arc::new(AtomicBool::new(false));
    let mut mono = Downmix::new(
        usize::from(config.channels.max(1)),
        config.sample_rate,
        Arc::clone(&overrun),
        events.clone(),
    );
    let mut lost = false;
    let on_error = move |err: ::cpal::Error| match err.kind() {
        ErrorKind::Xrun => {
            tracing::debug!("the {kind} overran: {err}");
            overrun.store(true, Ordering::Relaxed);
        }
        ErrorKind::DeviceChanged => tracing::info!("the {kind} moved to another device: {err}"),
        ErrorKind::DeviceBusy | ErrorKind::RealtimeDenied => {
            tracing::warn!("the {kind} reported: {err}")
        }
        _ if !lost => {
            lost = true;
            tracing::warn!("the {kind} was lost: {err} ({:?})", err.kind());
            let _ = events.send(Event::Lost(loss_reason(&err)));
        }
        _ => {}
    };
    let on_data = move |data: &Data, info: &InputCallbackInfo| mono.push(data, info);
    device.build_input_stream_raw(*config, format, on_data, on_error, Some(BUILD_TIMEOUT))
}

/// Why a capture ended, for the API's message.
fn loss_reason(err: &::cpal::Error) -> String {
    match err.kind() {
        ErrorKind::DeviceNotAvailable => "the device disconnected".into(),
        ErrorKind::HostUnavailable | ErrorKind::StreamInvalidated => {
            "the sound server ended the stream".into()
        }
        _ => err.to_string(),
    }
}
