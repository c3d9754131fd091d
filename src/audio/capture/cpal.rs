//! Real capture devices through cpal: the PulseAudio host when a sound server answers (PipeWire
//! included, through pipewire-pulse), ALSA otherwise. Each capture runs on a thread of its own that
//! owns the cpal stream and hands mono `f32` samples over a channel.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

use ::cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use ::cpal::{
    BufferSize, Data, Device, ErrorKind, FromSample, Host, HostId, InputCallbackInfo, SampleFormat,
    SizedSample, StreamConfig, StreamInstant, SupportedBufferSize,
};

use super::{AudioSource, CaptureError, CaptureStream, SourceKind};

/// The rate asked for when the device offers it (else the device's own rate is used).
const PREFERRED_RATE: u32 = 48_000;
/// Audio per device callback: short, so a stopped capture loses at most this much at its end.
const PERIOD: Duration = Duration::from_millis(40);
/// Longest wait for a device to start; `open` fails past it instead of hanging.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// What cpal itself may spend creating the stream (inside [`OPEN_TIMEOUT`]).
const BUILD_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest wait, when a stream is dropped, for its device to be released.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest gap an overrun is filled with silence for (a longer one is a clock jump, not lost audio).
const MAX_GAP: Duration = Duration::from_secs(10);

/// PulseAudio names the source that records what a sink plays `<sink>.monitor`.
const MONITOR_SUFFIX: &str = ".monitor";

/// A microphone or the system audio, found anew on each [`open`](AudioSource::open) so that a
/// device plugged in (or a default changed) after start-up is used.
pub struct CpalSource {
    kind: SourceKind,
    preferred: Option<String>,
}

impl CpalSource {
    /// The microphone: the input device named `preferred` (its PulseAudio or ALSA name, or the
    /// description a device list shows, the first matching exactly, else ignoring case), else the
    /// default input.
    ///
    /// A preferred device that is not connected does not stop a capture: it falls back to the
    /// default input and logs a warning naming it, as an unplugged headset would leave a user with
    /// the laptop's microphone rather than with no dictation at all. In the same spirit, when a
    /// device goes away during a capture PulseAudio moves the stream to the default input and the
    /// capture goes on; it ends with [`CaptureError::Lost`] when the server itself ends the stream
    /// (or, on ALSA, when the device goes). A monitor source (what a sink plays) is never taken as
    /// the microphone, even as the default input or by name.
    pub fn microphone(preferred: Option<String>) -> CpalSource {
        let preferred = preferred
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty());
        CpalSource {
            kind: SourceKind::Microphone,
            preferred,
        }
    }

    /// The system audio: the monitor of the default output (with PulseAudio, the source named
    /// `<default sink>.monitor`), else any monitor source. ALSA alone has none.
    pub fn system_audio() -> CpalSource {
        CpalSource {
            kind: SourceKind::SystemAudio,
            preferred: None,
        }
    }
}

impl AudioSource for CpalSource {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn open(&self) -> Result<Box<dyn CaptureStream>, CaptureError> {
        let kind = self.kind;
        let preferred = self.preferred.clone();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let (events_tx, events_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("capture-{}", thread_name(kind)))
            .spawn(move || {
                run_device(kind, preferred.as_deref(), ready_tx, events_tx, stop_rx);
                drop(done_tx);
            })
            .map_err(|e| CaptureError::OpenFailed {
                kind,
                reason: format!("no capture thread: {e}"),
            })?;
        match ready_rx.recv_timeout(OPEN_TIMEOUT) {
            Ok(Ok(sample_rate)) => Ok(Box::new(CpalStream {
                kind,
                sample_rate,
                events: events_rx,
                pending_loss: None,
                stop: Some(stop_tx),
                done: done_rx,
                thread: Some(thread),
            })),
            Ok(Err(err)) => Err(err),
            // The thread stops the device if it ever starts: the receiver is gone.
            Err(RecvTimeoutError::Timeout) => Err(CaptureError::OpenFailed {
                kind,
                reason: format!(
                    "the device did not start within {} s",
                    OPEN_TIMEOUT.as_secs()
                ),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(CaptureError::OpenFailed {
                kind,
                reason: "the capture thread stopped".into(),
            }),
        }
    }
}

fn thread_name(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Microphone => "microphone",
        SourceKind::SystemAudio => "system-audio",
    }
}

/// What the device thread sends to the reading side.
enum Event {
    Samples(Vec<f32>),
    Lost(String),
}

/// The device thread: opens the device, reports the outcome, then keeps the stream alive until
/// the [`CpalStream`] is dropped (its stop sender disconnects).
fn run_device(
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

/// PulseAudio when a server answers, else ALSA.
fn host() -> Result<Host, ::cpal::Error> {
    if ::cpal::available_hosts().contains(&HostId::PulseAudio) {
        match ::cpal::host_from_id(HostId::PulseAudio) {
            Ok(host) => return Ok(host),
            Err(err) => tracing::debug!("PulseAudio does not answer ({err}); using ALSA"),
        }
    }
    ::cpal::host_from_id(HostId::Alsa)
}

/// The device's name as its host knows it (the PulseAudio source name, the ALSA PCM name).
fn device_name(device: &Device) -> String {
    device.id().map(|id| id.id().to_owned()).unwrap_or_default()
}

/// What a device list shows for the device.
fn device_description(device: &Device) -> String {
    device
        .description()
        .map(|d| d.name().to_owned())
        .unwrap_or_else(|_| device_name(device))
}

fn is_monitor(device: &Device) -> bool {
    device_name(device).ends_with(MONITOR_SUFFIX)
}

fn input_devices(host: &Host) -> Vec<Device> {
    match host.input_devices() {
        Ok(devices) => devices.collect(),
        Err(err) => {
            tracing::warn!("could not list the input devices: {err}");
            Vec::new()
        }
    }
}

/// The microphone: the preferred device when connected, else the default input unless it is a
/// monitor, else the first input that is not a monitor.
fn find_microphone(host: &Host, preferred: Option<&str>) -> Option<Device> {
    let microphones = || -> Vec<Device> {
        input_devices(host)
            .into_iter()
            .filter(|d| !is_monitor(d))
            .collect()
    };
    if let Some(wanted) = preferred {
        let inputs = microphones();
        let exact = |d: &&Device| device_name(d) == wanted || device_description(d) == wanted;
        let loose = |d: &&Device| {
            device_name(d).eq_ignore_ascii_case(wanted)
                || device_description(d).eq_ignore_ascii_case(wanted)
        };
        if let Some(device) = inputs
            .iter()
            .find(exact)
            .or_else(|| inputs.iter().find(loose))
        {
            return Some(device.clone());
        }
        let known: Vec<String> = inputs.iter().map(device_name).collect();
        tracing::warn!(
            "the preferred microphone '{wanted}' is not connected; using the default input instead \
             (inputs: {})",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        );
    }
    if let Some(default) = host.default_input_device()
        && !is_monitor(&default)
    {
        return Some(default);
    }
    microphones().into_iter().next()
}

/// The monitor of the default output, else any monitor.
fn find_system_audio(host: &Host) -> Option<Device> {
    let monitors: Vec<Device> = input_devices(host).into_iter().filter(is_monitor).collect();
    let default_monitor = host
        .default_output_device()
        .map(|sink| format!("{}{MONITOR_SUFFIX}", device_name(&sink)));
    if let Some(name) = default_monitor
        && let Some(device) = monitors.iter().find(|d| device_name(d) == name)
    {
        return Some(device.clone());
    }
    monitors.into_iter().next()
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
    let mut mono = Downmix {
        channels: usize::from(config.channels.max(1)),
        rate: config.sample_rate,
        next_capture: None,
        overrun: Arc::clone(&overrun),
        events: events.clone(),
    };
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

/// Turns device callbacks into mono `f32` chunks; after an overrun, fills the samples the device
/// dropped with silence (from the capture timestamps) so the timeline stays intact.
struct Downmix {
    channels: usize,
    rate: u32,
    next_capture: Option<StreamInstant>,
    overrun: Arc<AtomicBool>,
    events: Sender<Event>,
}

impl Downmix {
    fn push(&mut self, data: &Data, info: &InputCallbackInfo) {
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

/// A running capture; dropping it stops the device thread.
struct CpalStream {
    kind: SourceKind,
    sample_rate: u32,
    events: Receiver<Event>,
    /// A loss seen while samples were being delivered, reported by the next read.
    pending_loss: Option<String>,
    stop: Option<Sender<()>>,
    /// Disconnects when the device thread ends.
    done: Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl CpalStream {
    fn lost(&self, reason: &str) -> CaptureError {
        CaptureError::Lost {
            kind: self.kind,
            reason: reason.to_owned(),
        }
    }
}

impl CaptureStream for CpalStream {
    fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    fn read(&mut self, out: &mut Vec<f32>, timeout: Duration) -> Result<(), CaptureError> {
        if let Some(reason) = &self.pending_loss {
            return Err(self.lost(reason));
        }
        let first = match self.events.recv_timeout(timeout) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => return Ok(()),
            Err(RecvTimeoutError::Disconnected) => {
                self.pending_loss = Some("the capture thread stopped".into());
                return Err(self.lost("the capture thread stopped"));
            }
        };
        let before = out.len();
        let mut next = Some(first);
        while let Some(event) = next {
            match event {
                Event::Samples(samples) => out.extend_from_slice(&samples),
                Event::Lost(reason) => {
                    // Everything captured before the loss has been delivered by now.
                    self.pending_loss = Some(reason);
                    break;
                }
            }
            next = self.events.try_recv().ok();
        }
        match &self.pending_loss {
            Some(reason) if out.len() == before => Err(self.lost(reason)),
            _ => Ok(()),
        }
    }
}

impl Drop for CpalStream {
    fn drop(&mut self) {
        // Disconnecting the stop channel lets the device thread drop the cpal stream.
        self.stop.take();
        match self.done.recv_timeout(STOP_TIMEOUT) {
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
            }
            _ => tracing::warn!(
                "the {} did not stop within {} s; leaving it to stop on its own",
                self.kind,
                STOP_TIMEOUT.as_secs()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
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
