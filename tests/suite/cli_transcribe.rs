//! `verbatim transcribe` and `verbatim models` end to end against the real binary.

use crate::common;

use assert_cmd::Command;
use common::{SpawnedServer, speak, test_models};
use predicates::prelude::*;

fn cli(home: &std::path::Path, models: &std::path::Path) -> Command {
    let mut cmd = Command::new(common::binary());
    cmd.env("VERBATIM_HOME", home)
        .env("VERBATIM_MODELS_DIR", models)
        .env_remove("VERBATIM_API_TOKEN");
    cmd
}

#[test]
fn transcribe_a_file_stdin_and_subtitles() {
    let Some(models) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let models = models.path().to_path_buf();
    cli(home.path(), &models)
        .args(["models", "select", "tiny.en"])
        .assert()
        .success()
        .stdout("Selected whisper (tiny.en)\n");
    let _server =
        SpawnedServer::start_with_env(home.path(), &[], &[("VERBATIM_MODELS_DIR", &models)]);
    cli(home.path(), &models)
        .arg("status")
        .assert()
        .success()
        .stdout("Ready - whisper (tiny.en), selected: loads on first use\n");

    let clip = speak(
        home.path(),
        "report",
        "Please send the quarterly report to the finance team before Friday afternoon.",
    );
    // A path goes through the local-file route; a relative path is resolved here. The text is
    // what tiny.en hears ("finance team" may come out otherwise), the same every way.
    let heard = cli(home.path(), &models)
        .arg("transcribe")
        .arg(&clip)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let expected = String::from_utf8(heard).unwrap();
    assert!(
        expected.starts_with("Please send the quarterly report to the ")
            && expected.ends_with(" before Friday afternoon.\n"),
        "{expected:?}"
    );
    cli(home.path(), &models)
        .arg("status")
        .assert()
        .success()
        .stdout("Ready - whisper (tiny.en), loaded\n");
    cli(home.path(), &models)
        .current_dir(home.path())
        .args(["transcribe", "report.wav"])
        .assert()
        .success()
        .stdout(expected.clone());
    // Standard input is uploaded.
    let bytes = std::fs::read(&clip).unwrap();
    cli(home.path(), &models)
        .args(["transcribe", "-"])
        .write_stdin(bytes.clone())
        .assert()
        .success()
        .stdout(expected.clone());
    cli(home.path(), &models)
        .arg("transcribe")
        .write_stdin(bytes)
        .assert()
        .success()
        .stdout(expected.clone());

    let srt = cli(home.path(), &models)
        .args(["transcribe"])
        .arg(&clip)
        .args(["--format", "srt"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let srt = String::from_utf8(srt).unwrap();
    assert!(srt.starts_with("1\n00:00:00,000 --> 00:00:0"), "{srt}");
    assert!(srt.contains("quarterly report"), "{srt}");
    let vtt = cli(home.path(), &models)
        .args(["transcribe", "--format", "vtt"])
        .arg(&clip)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8(vtt)
            .unwrap()
            .starts_with("WEBVTT\n\n00:00:00.000 --> ")
    );

    let json = cli(home.path(), &models)
        .args(["transcribe", "--json"])
        .arg(&clip)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        (json["engine"].as_str(), json["model"].as_str()),
        (Some("whisper"), Some("tiny.en"))
    );

    // The models table marks the selection.
    cli(home.path(), &models)
        .arg("models")
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                r"(?m)^tiny\.en +whisper +Whisper Tiny \(English\) +75 MB +1 +(downloaded|loaded), selected$",
            )
            .unwrap(),
        );
}

#[test]
fn transcribe_errors_map_to_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let models = models.path();
    // Local errors: exit 1, before any request.
    cli(home.path(), models)
        .args(["transcribe", "/no/such/clip.wav"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("File not found"));
    cli(home.path(), models)
        .args(["transcribe", "-"])
        .write_stdin(Vec::new())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No audio on standard input"));
    cli(home.path(), models)
        .args([
            "transcribe",
            "--language",
            "en",
            "--language-hint",
            "de",
            "x.wav",
        ])
        .assert()
        .code(1);
    // Enum-like options are checked by the command line, before any request.
    let named = home.path().join("named.wav");
    std::fs::write(&named, b"RIFF").unwrap();
    cli(home.path(), models)
        .args(["transcribe", "--task", "summarize"])
        .arg(&named)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "invalid value 'summarize' for '--task <TASK>'",
        ))
        .stderr(predicate::str::contains(
            "[possible values: transcribe, translate]",
        ));
    // Nothing listening: exit 2.
    let port = common::closed_port().to_string();
    let clip = speak(home.path(), "hello", "Hello there.");
    cli(home.path(), models)
        .args(["transcribe", "--port", &port])
        .arg(&clip)
        .assert()
        .code(2);
    // The server refuses: exit 3 with its message (no model selected).
    let _server =
        SpawnedServer::start_with_env(home.path(), &[], &[("VERBATIM_MODELS_DIR", models)]);
    cli(home.path(), models)
        .arg("transcribe")
        .arg(&clip)
        .assert()
        .code(3)
        .stderr("Error: Server returned 503 - No engine selected. Select an engine first.\n");
    // A model that is not installed is not selected: the command that gets it, and the
    // selection stays as it was.
    cli(home.path(), models)
        .args(["models", "select", "tiny.en"])
        .assert()
        .code(1)
        .stderr(
            "Error: Model 'tiny.en' is not installed: verbatim models download tiny.en (then select it); no model is selected.\n",
        );
    cli(home.path(), models)
        .args(["config", "set", "selectedModel", "tiny.en"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("verbatim models download tiny.en"));
    cli(home.path(), models)
        .arg("transcribe")
        .arg(&clip)
        .assert()
        .code(3)
        .stderr("Error: Server returned 503 - No engine selected. Select an engine first.\n");
    // A typo names the model meant.
    cli(home.path(), models)
        .args(["models", "select", "tiny-en"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "Error: Unknown model 'tiny-en'. Did you mean 'tiny.en'? Known models: ",
        ));
    cli(home.path(), models)
        .args(["config", "set", "selectedModel", "bogus-model"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "Error: Unknown model 'bogus-model'. Known models: ",
        ));
}

#[test]
fn import_ct2_refuses_malformed_input_and_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("config.json"), "{}").unwrap();
    std::fs::write(source.path().join("model.bin"), b"\x06\x00\x00\x00garbage").unwrap();
    std::fs::write(source.path().join("vocabulary.txt"), "a\nb\n").unwrap();
    cli(home.path(), models.path())
        .args(["models", "import-ct2"])
        .arg(source.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("model.bin"));
    assert_eq!(
        std::fs::read_dir(models.path()).unwrap().count(),
        0,
        "no partial model left"
    );
    cli(home.path(), models.path())
        .args(["models", "import-ct2", "/no/such/dir"])
        .assert()
        .code(1);
    // Another quantization is refused, naming those offered.
    cli(home.path(), models.path())
        .args(["models", "import-ct2"])
        .arg(source.path())
        .args(["--quantize", "q4_0"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "invalid value 'q4_0' for '--quantize <QUANTIZE>'",
        ))
        .stderr(predicate::str::contains("[possible values: q8_0, q5_1]"));
}

/// Sim mode: `--progress` streams the answer and shows each segment on standard error as it
/// comes, while standard output keeps the result in the chosen format (`txt`, `verbose_json`
/// with `--words`).
#[test]
fn progress_shows_segments_as_they_come_and_the_result_stays_on_stdout() {
    let home = tempfile::tempdir().unwrap();
    let _server = SpawnedServer::start(home.path(), &["--sim"]);
    let clip = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/clips/en-weather.wav");
    let expected = common::recorded_text("en-weather");
    let run = |args: &[&str]| {
        let output = cli(home.path(), home.path())
            .arg("transcribe")
            .arg(&clip)
            .args(args)
            .assert()
            .success()
            .get_output()
            .clone();
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (stdout, stderr) = run(&["--progress", "--format", "txt"]);
    assert_eq!(stdout, format!("{expected}\n"));
    assert_eq!(stderr, format!("[00:00:00.000] {expected}\n"));
    // Not a terminal: nothing on standard error unless asked.
    let (stdout, stderr) = run(&[]);
    assert_eq!(
        (stdout.as_str(), stderr.as_str()),
        (format!("{expected}\n").as_str(), "")
    );
    let (stdout, _) = run(&["--progress", "--format", "verbose_json", "--words"]);
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["text"], expected.as_str());
    assert_eq!(
        result["words"].as_array().map(Vec::len),
        Some(expected.split_whitespace().count())
    );
    let (stdout, _) = run(&["--progress", "--format", "srt"]);
    assert!(
        stdout.starts_with("1\n00:00:00,000 --> 00:00:03,000\n"),
        "{stdout}"
    );
}

/// Subtitles for reading, end to end: Moonshine hears one long chunk as one segment, and the
/// SRT the CLI writes holds cues of at most 7 s and two lines; a sentence that begins with an
/// ordinal keeps it a word ("Third, …"), as "First, …" always did.
#[test]
fn long_segments_become_readable_cues_and_sentences_start_with_words() {
    let Some(models) = common::test_models_with_moonshine() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let models = models.path().to_path_buf();
    cli(home.path(), &models)
        .args(["models", "select", "tiny.en"])
        .assert()
        .success();
    let _server =
        SpawnedServer::start_with_env(home.path(), &[], &[("VERBATIM_MODELS_DIR", &models)]);
    let long = speak(
        home.path(),
        "long",
        "Please send the quarterly report to the finance team before Friday afternoon, \
         then book a meeting room for Tuesday morning and invite the whole support team \
         so that we can plan the next quarter together.",
    );
    let srt = cli(home.path(), &models)
        .arg("transcribe")
        .arg(&long)
        .args([
            "--model",
            "moonshine-tiny",
            "--format",
            "srt",
            "--no-progress",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let srt = String::from_utf8(srt).unwrap();
    let cues: Vec<&str> = srt.split("\n\n").filter(|c| !c.trim().is_empty()).collect();
    assert!(cues.len() >= 2, "{srt}");
    for cue in &cues {
        let lines: Vec<&str> = cue.lines().collect();
        let (start, end) = lines[1].split_once(" --> ").unwrap();
        let seconds = |t: &str| {
            let (hms, ms) = t.split_once(',').unwrap();
            let parts: Vec<f64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
            parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + ms.parse::<f64>().unwrap() / 1000.0
        };
        assert!(seconds(end) - seconds(start) <= 7.0 + 1e-3, "{cue}");
        assert!(lines.len() - 2 <= 2, "{cue}");
    }

    let ordinal = speak(home.path(), "ordinal", "Third, we ship the product.");
    let text = cli(home.path(), &models)
        .arg("transcribe")
        .arg(&ordinal)
        .arg("--no-progress")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with("Third"), "{text}");
}

/// `models import FILE` installs a ggml file offline as the model its header names, and
/// selects it when nothing installed is selected; `models remove` keeps the selected model
/// unless forced, and then selects another installed one.
#[test]
fn a_ggml_file_is_imported_offline_and_the_selected_model_is_removed_only_when_forced() {
    let Some(cache) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = cli(home.path(), models.path()).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let not_a_model = home.path().join("notes.bin");
    std::fs::write(
        &not_a_model,
        "these are not weights at all, only words; ".repeat(4),
    )
    .unwrap();
    let (code, _, err) = run(&["models", "import", not_a_model.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("it is not a ggml file"), "{err}");

    let tiny = cache.weights_path(verbatim::engine::catalog::find_model("tiny.en").unwrap());
    let tiny = tiny.to_str().unwrap();
    let (code, out, err) = run(&["models", "import", tiny]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("Installed tiny.en at "), "{out}");
    assert!(
        out.ends_with("Selected tiny.en (no installed model was selected).\n"),
        "{out}"
    );
    // A header says what the file is: another id is refused.
    let (code, _, err) = run(&["models", "import", tiny, "--id", "tiny"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is tiny.en by its header, not tiny"), "{err}");
    let q8 = cache.weights_path(verbatim::engine::catalog::find_model("tiny.en-q8_0").unwrap());
    assert!(q8.exists(), "scripts/test installs tiny.en-q8_0");
    let (code, out, err) = run(&["models", "import", q8.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.ends_with(
            "tiny.en stays selected; to use tiny.en-q8_0 instead: verbatim models select tiny.en-q8_0\n"
        ),
        "{out}"
    );
    let (_, listed, _) = run(&["models", "select", "tiny.en-q8_0"]);
    assert_eq!(listed, "Selected whisper (tiny.en-q8_0)\n");

    let (code, _, err) = run(&["models", "remove", "tiny.en-q8_0"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "Error: 'tiny.en-q8_0' is the selected model: select another first (verbatim models select ID), or remove it anyway with --force.\n"
    );
    let (code, out, _) = run(&["models", "remove", "tiny.en-q8_0", "--force"]);
    assert_eq!(code, Some(0));
    assert_eq!(out, "Removed tiny.en-q8_0; selected tiny.en instead.\n");
    let (code, out, _) = run(&["models", "remove", "tiny.en", "--force"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "Removed tiny.en; no model is installed now: verbatim models download tiny.en-q8_0\n"
    );
    assert!(!models.path().join("tiny.en").exists());
}

/// Ctrl-C during a long transcription prints what was heard so far, marked partial, and exits
/// 130; the server stops the work.
#[test]
fn ctrl_c_prints_the_partial_transcript_and_exits_130() {
    use std::io::{BufRead, BufReader, Read};
    let Some(models) = test_models() else { return };
    let home = tempfile::tempdir().unwrap();
    let server = common::serve_model(home.path(), &models, "tiny.en", &[]);
    let long = home.path().join("long.wav");
    std::fs::write(&long, common::long_speech_wav("real-two-cities", 180)).unwrap();
    let mut child = std::process::Command::new(common::binary())
        .env("VERBATIM_HOME", home.path())
        .env_remove("VERBATIM_API_TOKEN")
        .args(["transcribe", "--progress"])
        .arg(&long)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.starts_with("[00:00:"), "{first:?}");
    // SAFETY: kill only sends a signal to the child started above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        out.to_lowercase().starts_with("it was the best of times"),
        "{out:?}"
    );
    assert!(
        rest.lines()
            .any(|l| l.starts_with("Interrupted: partial transcript, ")),
        "{rest}"
    );
    drop(server);
}
