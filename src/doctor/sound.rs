//! The sound server (PulseAudio or PipeWire's PulseAudio service, asked with `pactl info`, else
//! its socket) and the capture devices a dictation or Recorder capture would open.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Context, Finding};

const SERVER: &str = "sound server";
const MICROPHONE: &str = "microphone";
const SYSTEM_AUDIO: &str = "system audio";
/// Longest wait for `pactl` or the device list.
const TIMEOUT: Duration = Duration::from_secs(10);

pub fn sound_server(context: &Context) -> Finding {
    match pactl_info(context) {
        Ok(name) => return Finding::ok(SERVER, format!("{name} answers")),
        Err(PactlError::Refused(why)) => {
            return Finding::warn(
                SERVER,
                format!(
                    "no PulseAudio-compatible server answers ({why}); capture falls back to ALSA"
                ),
                START_SERVER,
            );
        }
        Err(PactlError::NotInstalled) => {}
    }
    // No pactl to ask: look for the sockets.
    let socket = |name: &str| context.runtime_dir.as_ref().map(|dir| dir.join(name));
    let pulse: Option<PathBuf> = match &context.pulse_server {
        Some(server) => Some(PathBuf::from(server.trim_start_matches("unix:"))),
        None => socket("pulse/native"),
    };
    if let Some(pulse) = pulse.filter(|path| path.exists()) {
        return Finding::ok(
            SERVER,
            format!(
                "a PulseAudio socket is at {} (pactl is not installed to ask it)",
                pulse.display()
            ),
        );
    }
    if let Some(pipewire) = socket("pipewire-0").filter(|path| path.exists()) {
        return Finding::warn(
            SERVER,
            format!(
                "PipeWire runs ({}) without its PulseAudio service",
                pipewire.display()
            ),
            "install and start pipewire-pulse: sudo apt install pipewire-pulse && \
             systemctl --user enable --now pipewire-pulse",
        );
    }
    Finding::warn(
        SERVER,
        "no sound server found (pactl is not installed and there is no socket); capture uses ALSA",
        START_SERVER,
    )
}

const START_SERVER: &str = "start your desktop's sound server: `systemctl --user start \
    pipewire-pulse` (PipeWire) or `pulseaudio --start`; for the service, install it from a \
    desktop terminal (`verbatim service install`) so it knows XDG_RUNTIME_DIR";

enum PactlError {
    NotInstalled,
    Refused(String),
}

/// `pactl info`'s server name and version, e.g. `PulseAudio (on PipeWire 1.0.5) 15.0.0`.
fn pactl_info(context: &Context) -> Result<String, PactlError> {
    let mut command = context.desktop.command("pactl");
    command
        .arg("info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &context.runtime_dir {
        command.env("XDG_RUNTIME_DIR", dir);
    }
    let output = run_with_timeout(command).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => PactlError::NotInstalled,
        _ => PactlError::Refused(err.to_string()),
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.lines().next().unwrap_or("pactl info failed").trim();
        return Err(PactlError::Refused(why.to_string()));
    }
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|line| line.trim().strip_prefix(name))
            .map(|value| value.trim().to_string())
    };
    let name = field("Server Name:").unwrap_or_else(|| "a sound server".into());
    Ok(match field("Server Version:") {
        Some(version) => format!("{name} {version}"),
        None => name,
    })
}

/// Runs `command`, killing it past [`TIMEOUT`].
fn run_with_timeout(mut command: Command) -> std::io::Result<std::process::Output> {
    let child = command.spawn()?;
    let pid = child.id();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let deadline = Instant::now() + TIMEOUT;
    match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(output) => output,
        Err(_) => {
            // SAFETY: signalling the child this function started, which has not been reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", TIMEOUT.as_secs()),
            ))
        }
    }
}

/// The microphone (needed for dictation) and the system-audio monitor (only the Recorder's).
#[cfg(feature = "capture")]
pub fn capture_devices(preferred_microphone: &str) -> Vec<Finding> {
    let preferred = Some(preferred_microphone).filter(|name| !name.is_empty());
    let preferred_owned = preferred.map(str::to_owned);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(crate::audio::capture::cpal::inventory(
            preferred_owned.as_deref(),
        ));
    });
    let inventory = match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(inventory)) => inventory,
        Ok(Err(err)) => return no_devices(&format!("the audio devices cannot be listed: {err}")),
        Err(_) => return no_devices("listing the audio devices did not finish in time"),
    };
    let host = &inventory.host;
    let microphone = match inventory.microphone {
        Some(device) => {
            let wanted = match preferred {
                Some(name) if !device.contains(name) => {
                    format!(" (the preferred '{name}' is not connected: the default is used)")
                }
                _ => String::new(),
            };
            match opens(preferred) {
                Ok(()) => Finding::ok(MICROPHONE, format!("{device} through {host}{wanted}")),
                Err(why) => Finding::fail(
                    MICROPHONE,
                    format!("{device} through {host} cannot be opened: {why}"),
                    "check that the sound server lists it (`pactl list short sources`) and that \
                     no other program holds it; without a sound server, start one",
                ),
            }
        }
        None => Finding::fail(
            MICROPHONE,
            format!(
                "no capture device through {host} ({} inputs, none a microphone)",
                inventory.inputs.len()
            ),
            "connect a microphone and check that the sound server sees it (`pactl list short \
             sources`); then choose it with `verbatim config set preferredMicrophone NAME`",
        ),
    };
    let system_audio = match inventory.system_audio {
        Some(monitor) => Finding::ok(SYSTEM_AUDIO, format!("{monitor} through {host}")),
        None => Finding::warn(
            SYSTEM_AUDIO,
            format!(
                "no monitor source through {host}: the Recorder cannot capture what the speakers play"
            ),
            "use PulseAudio or PipeWire (every output has a `.monitor` source); ALSA alone has none",
        ),
    };
    vec![microphone, system_audio]
}

/// Opens the microphone as a dictation would, and closes it at once.
#[cfg(feature = "capture")]
fn opens(preferred: Option<&str>) -> Result<(), String> {
    use crate::audio::capture::AudioSource;
    let source = crate::audio::capture::cpal::CpalSource::microphone(preferred.map(str::to_owned));
    source.open().map(drop).map_err(|err| err.to_string())
}

#[cfg(feature = "capture")]
fn no_devices(why: &str) -> Vec<Finding> {
    vec![
        Finding::fail(MICROPHONE, why, START_SERVER),
        Finding::warn(SYSTEM_AUDIO, why, START_SERVER),
    ]
}

#[cfg(not(feature = "capture"))]
pub fn capture_devices(_preferred_microphone: &str) -> Vec<Finding> {
    let why = "this build has no audio capture (built without the `capture` feature)";
    let fix = "build with the default features (needs libasound2-dev): cargo build --release";
    vec![
        Finding::fail(MICROPHONE, why, fix),
        Finding::warn(SYSTEM_AUDIO, why, fix),
    ]
}
