//! Finding the device: the host (PulseAudio, else ALSA), device names, and the choice of
//! the microphone or the system-audio monitor.

use ::cpal::traits::{DeviceTrait, HostTrait};
use ::cpal::{Device, Host, HostId};

/// PulseAudio names the source that records what a sink plays `<sink>.monitor`.
const MONITOR_SUFFIX: &str = ".monitor";

/// PulseAudio when a server answers, else ALSA.
pub(super) fn host() -> Result<Host, ::cpal::Error> {
    if ::cpal::available_hosts().contains(&HostId::PulseAudio) {
        match ::cpal::host_from_id(HostId::PulseAudio) {
            Ok(host) => return Ok(host),
            Err(err) => tracing::debug!("PulseAudio does not answer ({err}); using ALSA"),
        }
    }
    ::cpal::host_from_id(HostId::Alsa)
}

/// The device's name as its host knows it (the PulseAudio source name, the ALSA PCM name).
pub(super) fn device_name(device: &Device) -> String {
    device.id().map(|id| id.id().to_owned()).unwrap_or_default()
}

/// What a device list shows for the device.
pub(super) fn device_description(device: &Device) -> String {
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
pub(super) fn find_microphone(host: &Host, preferred: Option<&str>) -> Option<Device> {
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
pub(super) fn find_system_audio(host: &Host) -> Option<Device> {
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

/// What capture finds on this machine, for `verbatim doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// `PulseAudio` or `ALSA`.
    pub host: String,
    /// The device a microphone capture would open (`preferred` when connected), by description.
    pub microphone: Option<String>,
    /// The monitor a system-audio capture would open, by name.
    pub system_audio: Option<String>,
    /// Every input device, monitors included, by name.
    pub inputs: Vec<String>,
}

/// Looks for the devices exactly as a capture would.
pub fn inventory(preferred: Option<&str>) -> Result<Inventory, String> {
    let host = host().map_err(|err| err.to_string())?;
    Ok(Inventory {
        host: match host.id() {
            HostId::PulseAudio => "PulseAudio",
            _ => "ALSA",
        }
        .to_string(),
        microphone: find_microphone(&host, preferred)
            .map(|d| format!("{} ({})", device_description(&d), device_name(&d))),
        system_audio: find_system_audio(&host).map(|d| device_name(&d)),
        inputs: input_devices(&host).iter().map(device_name).collect(),
    })
}
