//! Real capture through cpal on the private PulseAudio server `scripts/test` starts
//! (`scripts/lib/pulse.sh`): corpus clips played into its null sink come back, recognisable by the
//! corpus fingerprints, from the system-audio source and from the virtual microphone. Skipped
//! outside `scripts/test`, failed under `CI` when the server is missing.
#![cfg(feature = "capture")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common;

use common::pulse::{Pulse, pulse};
use verbatim::audio::capture::cpal::CpalSource;
use verbatim::audio::capture::{AudioSource, CaptureError, CaptureStream, real_devices};
use verbatim::audio::resample::resample_to_16k;
use verbatim_sim::{Clip, Corpus, FingerprintIndex, Match};

/// How long a capture goes on after the player has finished: the sink's and the source's latency.
const TAIL: Duration = Duration::from_millis(300);
/// Longest a read waits; short so the player's end is noticed at once.
const READ: Duration = Duration::from_millis(20);

struct Fingerprints {
    corpus: Corpus,
    index: FingerprintIndex,
}

/// The corpus speech clips up to 10 s (the long ones only slow the search down).
fn fingerprints() -> &'static Fingerprints {
    static FINGERPRINTS: OnceLock<Fingerprints> = OnceLock::new();
    FINGERPRINTS.get_or_init(|| {
        let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
        let mut index = FingerprintIndex::new();
        for clip in corpus.clips() {
            if clip.entry.kind == verbatim_sim::ClipKind::Speech && clip.duration() <= 10.0 {
                index.insert(clip.id(), &clip.samples);
            }
        }
        Fingerprints { corpus, index }
    })
}

fn clip(id: &str) -> (&'static Clip, PathBuf) {
    let fp = fingerprints();
    let clip = fp.corpus.clip(id).unwrap();
    (clip, fp.corpus.dir().join(&clip.entry.file))
}

/// A running paplay, stopped if a test fails before it ends.
struct Player(Child);

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Plays `file` into `sink` while reading every stream; returns what each captured, at 16 kHz.
fn capture_playing(
    streams: &mut [&mut dyn CaptureStream],
    file: &Path,
    sink: &str,
) -> Vec<Vec<f32>> {
    let mut captured = vec![Vec::new(); streams.len()];
    let mut player = Player(
        Command::new("paplay")
            .arg(format!("--device={sink}"))
            .arg("--latency-msec=50")
            .arg(file)
            .spawn()
            .expect("paplay is installed by scripts/test"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut finished: Option<Instant> = None;
    while finished.is_none_or(|at| at.elapsed() < TAIL) {
        for (stream, out) in streams.iter_mut().zip(&mut captured) {
            stream.read(out, READ).unwrap();
        }
        if finished.is_none()
            && let Some(status) = player.0.try_wait().unwrap()
        {
            assert!(status.success(), "paplay {}: {status}", file.display());
            finished = Some(Instant::now());
        }
        assert!(Instant::now() < deadline, "paplay did not finish");
    }
    streams
        .iter()
        .zip(captured)
        .map(|(stream, samples)| resample_to_16k(&samples, stream.sample_rate()))
        .collect()
}

fn rms(samples: &[f32]) -> f32 {
    (samples.iter().map(|s| s * s).sum::<f32>() / samples.len().max(1) as f32).sqrt()
}

/// Asserts that `captured` (16 kHz) holds `clip`, whole and at its own level.
fn assert_holds(captured: &[f32], clip: &Clip) -> Match {
    let found = fingerprints().index.recognise(captured);
    let Some(found) = found else {
        panic!(
            "nothing recognised in {:.2} s of capture (rms {:.4}); expected {}",
            captured.len() as f64 / 16_000.0,
            rms(captured),
            clip.id()
        );
    };
    assert_eq!(found.clip_id, clip.id(), "{found:?}");
    assert_eq!(found.clip_offset, 0, "the clip's start was cut: {found:?}");
    let heard = &captured[found.start_sample..found.end_sample];
    assert!(
        heard.len() + 160 >= clip.samples.len(),
        "the clip's end was cut: {found:?}"
    );
    let level = rms(heard) / rms(&clip.samples[..heard.len()]);
    assert!(
        (0.8..1.25).contains(&level),
        "captured at {level:.2} times the clip's level"
    );
    found
}

#[test]
fn system_audio_captures_what_the_default_output_plays() {
    let Some(_pulse) = pulse() else { return };
    let (clip, file) = clip("en-hello");
    let devices = real_devices(None);
    let mut stream = devices.system_audio.open().unwrap();
    assert_eq!(stream.sample_rate(), 48_000);
    let captured = capture_playing(&mut [stream.as_mut()], &file, "verbatim_sink");
    let found = assert_holds(&captured[0], clip);
    eprintln!("system audio: {found:?}");
}

#[test]
fn the_default_microphone_captures_its_input() {
    let Some(_pulse) = pulse() else { return };
    let (clip, file) = clip("fr-weather");
    let devices = real_devices(None);
    let mut stream = devices.microphone.open().unwrap();
    assert_eq!(stream.sample_rate(), 48_000);
    let captured = capture_playing(&mut [stream.as_mut()], &file, "verbatim_sink");
    let found = assert_holds(&captured[0], clip);
    eprintln!("microphone: {found:?}");
}

/// A module loaded into the test server for one test, unloaded when dropped.
struct Module(String);

impl Module {
    fn load(args: &[&str]) -> Module {
        let out = Command::new("pactl")
            .arg("load-module")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "pactl load-module {args:?}: {out:?}");
        Module(String::from_utf8(out.stdout).unwrap().trim().to_owned())
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = Command::new("pactl")
            .args(["unload-module", &self.0])
            .status();
    }
}

/// Has the server end every recording from the source `name` (as when it stops); returns how
/// many there were.
fn kill_recordings_from(pulse: &Pulse, name: &str) -> usize {
    let list = |what: &str| {
        let out = Command::new("pactl")
            .args(["list", "short", what])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let sources = list("sources");
    let index = sources
        .lines()
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .find(|fields| fields.get(1) == Some(&name))
        .map(|fields| fields[0].to_owned())
        .unwrap_or_else(|| panic!("no source {name} in {sources}"));
    let outputs = list("source-outputs");
    let mut killed = 0;
    for fields in outputs
        .lines()
        .map(|line| line.split('\t').collect::<Vec<_>>())
    {
        if fields.get(1) == Some(&index.as_str()) {
            // One may be going away already: a failure is no error.
            let _ = Command::new("pacmd")
                .args(["kill-source-output", fields[0]])
                .env("PULSE_RUNTIME_PATH", &pulse.dir)
                .stdout(Stdio::null())
                .status();
            killed += 1;
        }
    }
    killed
}

/// Reads `stream` until it fails, which it must within 3 s; returns the failure.
fn read_until_lost(stream: &mut dyn CaptureStream) -> CaptureError {
    let started = Instant::now();
    let mut rest = Vec::new();
    let err = loop {
        match stream.read(&mut rest, READ) {
            Ok(()) => assert!(
                started.elapsed() < Duration::from_secs(3),
                "the capture went on after its stream was ended"
            ),
            Err(err) => break err,
        }
    };
    assert!(matches!(err, CaptureError::Lost { .. }), "{err:?}");
    // The loss is final.
    assert!(matches!(
        stream.read(&mut rest, Duration::ZERO),
        Err(CaptureError::Lost { .. })
    ));
    err
}

#[test]
fn the_preferred_microphone_is_used_by_name_and_a_lost_stream_ends_the_capture() {
    let Some(pulse) = pulse() else { return };
    let probe = format!("verbatim_probe_{}", std::process::id());
    let _probe = Module::load(&[
        "module-remap-source",
        "master=verbatim_sink.monitor",
        &format!("source_name={probe}"),
    ]);
    let (clip, file) = clip("en-hello");
    let mut preferred = CpalSource::microphone(Some(probe.clone())).open().unwrap();
    // Not connected: the default microphone instead.
    let mut missing = CpalSource::microphone(Some("No such microphone".into()))
        .open()
        .unwrap();
    // A monitor is never a microphone, even by name: the default microphone instead.
    let mut monitor = CpalSource::microphone(Some("verbatim_sink.monitor".into()))
        .open()
        .unwrap();
    let captured = capture_playing(
        &mut [preferred.as_mut(), missing.as_mut(), monitor.as_mut()],
        &file,
        "verbatim_sink",
    );
    for samples in &captured {
        assert_holds(samples, clip);
    }

    // Which device each stream records from shows in what ending that device's recordings ends.
    assert_eq!(kill_recordings_from(&pulse, &probe), 1);
    let err = read_until_lost(preferred.as_mut());
    eprintln!("preferred: {err}");
    assert!(kill_recordings_from(&pulse, "verbatim_mic") >= 2);
    read_until_lost(missing.as_mut());
    read_until_lost(monitor.as_mut());
}

/// Env var that makes [`no_sound_server_child`] run (in the process the test below starts).
const CHILD: &str = "VERBATIM_TEST_NO_SOUND_CHILD";

#[test]
fn without_a_sound_server_or_card_no_source_is_available_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // An ALSA configuration with no PCM at all: no card, no default, no PulseAudio plugin.
    let alsa = dir.path().join("alsa.conf");
    std::fs::write(&alsa, "# no devices\n").unwrap();
    // The child test's name in this binary: its module path without the crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let child = format!("{module}::no_sound_server_child");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child, "--ignored", "--nocapture"])
        .env(CHILD, "1")
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("ALSA_CONFIG_PATH", &alsa)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());
    assert!(text.contains("1 passed"), "the child test did not run");
}

#[test]
#[ignore = "run by without_a_sound_server_or_card_no_source_is_available_at_once"]
fn no_sound_server_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let devices = real_devices(Some("Some microphone".into()));
    for source in [&devices.microphone, &devices.system_audio] {
        let started = Instant::now();
        let err = source.open().err().expect("a source opened with no device");
        let took = started.elapsed();
        println!("{}: {err} ({took:?})", source.kind());
        assert_eq!(
            err,
            CaptureError::NotAvailable {
                kind: source.kind()
            }
        );
        assert!(took < Duration::from_secs(2), "took {took:?}");
    }
    assert_eq!(
        devices.microphone.open().err().unwrap().to_string(),
        "No microphone available"
    );
}

/// Dictations from the real microphone, started and stopped as a person would through the
/// CLI against the real server, with no display to type into:
/// - with insertion off, a silent dictation completes and says no speech was heard, and a
///   normal stop writes no ERROR to the log (the PulseAudio client logged "Reactor error:
///   Client disconnected" on every stop);
/// - with insertion on, `dictation start` warns at once, and `dictation result` prints the text
///   and where it is kept before the insertion problem.
#[test]
fn dictations_without_a_display_keep_their_text_and_say_why_it_was_not_typed() {
    let Some(_pulse) = pulse() else { return };
    let Some(models) = common::test_models() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let models = models.path().to_path_buf();
    let no_display = Path::new("");
    let run = |args: &[&str]| {
        common::verbatim(home.path())
            .env("VERBATIM_MODELS_DIR", &models)
            .env("DISPLAY", no_display)
            .env("WAYLAND_DISPLAY", no_display)
            .args(args)
            .output()
            .unwrap()
    };
    let cli = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let dictate = |speech: Option<&Path>| -> (String, String) {
        let started = run(&["--json", "dictation", "start"]);
        assert!(started.status.success(), "{started:?}");
        let id = serde_json::from_slice::<serde_json::Value>(&started.stdout).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let warning = String::from_utf8(started.stderr).unwrap();
        match speech {
            Some(file) => {
                let status = Command::new("paplay")
                    .args(["--device=verbatim_sink", "--latency-msec=50"])
                    .arg(file)
                    .status()
                    .unwrap();
                assert!(status.success());
                std::thread::sleep(Duration::from_millis(500));
            }
            None => std::thread::sleep(Duration::from_millis(1500)),
        }
        cli(&["dictation", "stop"]);
        (id, warning)
    };
    cli(&["models", "select", "tiny.en"]);
    cli(&["config", "set", "dictationInsertion", "none"]);
    let mut server = common::SpawnedServer::start_with_env(
        home.path(),
        &[],
        &[
            ("VERBATIM_MODELS_DIR", models.as_path()),
            ("DISPLAY", no_display),
            ("WAYLAND_DISPLAY", no_display),
        ],
    );

    let (id, warning) = dictate(None);
    assert_eq!(warning, "", "insertion is off: nothing to warn of");
    // The start loaded the model ahead, though nothing was said for it to transcribe.
    let loaded = || {
        let models: serde_json::Value =
            serde_json::from_str(&cli(&["--json", "models", "list"])).unwrap();
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "tiny.en" && m["loaded"] == true)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !loaded() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(loaded(), "tiny.en loaded at the start of a dictation");
    let out = run(&["dictation", "result", &id, "--wait"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("No speech was heard"),
        "{out:?}"
    );

    cli(&["config", "set", "dictationInsertion", "clipboard"]);
    let (_, file) = clip("en-founded");
    let (id, warning) = dictate(Some(&file));
    assert!(
        warning.starts_with("Warning: the text cannot be typed into a window here"),
        "{warning}"
    );
    let out = run(&["dictation", "result", &id, "--wait"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.to_lowercase().contains("founded"), "{text}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let kept = stderr
        .find("kept in history")
        .unwrap_or_else(|| panic!("{stderr}"));
    let failed = stderr.find("failed").unwrap_or_else(|| panic!("{stderr}"));
    assert!(kept < failed, "{stderr}");

    server.signal(libc::SIGTERM);
    server.wait_exit();
    let log = server.stderr();
    assert!(!log.contains("Reactor error"), "{log}");
    assert!(log.contains("/v1/dictation/stop"), "{log}");
}
