//! The corpus as committed (clip count, formats, kinds, size) and the loader's errors, and the
//! recording format (sorted, pretty JSON; checks naming the file).

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::*;
use verbatim_sim::{ClipKind, Corpus, CorpusError, RecordedClip, Recording, Segment};

#[test]
fn the_corpus_has_what_the_simulation_needs() {
    let corpus = corpus();
    let clips = corpus.clips();
    assert!(clips.len() >= 24, "{} clips", clips.len());
    let count = |kind| clips.iter().filter(|c| c.entry.kind == kind).count();
    assert!(count(ClipKind::Speech) >= 20);
    assert_eq!(count(ClipKind::Silence), 2);
    assert!(count(ClipKind::Noise) >= 1);
    for language in ["en", "de", "fr", "es"] {
        assert!(
            clips.iter().any(|c| c.entry.language == language),
            "{language}"
        );
    }
    let voices: std::collections::BTreeSet<&str> = clips
        .iter()
        .filter(|c| c.entry.language == "en")
        .map(|c| c.entry.voice.as_str())
        .collect();
    assert!(voices.len() >= 4, "{voices:?}");
    // Real voices, each taken from a package file named by its checksum.
    let real: Vec<_> = clips.iter().filter(|c| c.is_real()).collect();
    assert!(
        real.iter()
            .filter(|c| c.entry.kind == ClipKind::Speech)
            .count()
            >= 10,
        "{} real speech clips",
        real.len()
    );
    for c in &real {
        let source = &c.entry.source;
        assert!(
            source.package.is_some() && source.member.is_some(),
            "{}",
            c.id()
        );
        assert_eq!(
            source.sha256.as_ref().map(String::len),
            Some(64),
            "{}",
            c.id()
        );
    }
    assert!(
        clips.iter().any(|c| c.duration() > 30.0),
        "a clip over 30 s"
    );
    let silences: Vec<f64> = clips
        .iter()
        .filter(|c| c.entry.kind == ClipKind::Silence)
        .map(|c| c.duration())
        .collect();
    assert_eq!(silences, [1.0, 3.0]);
    for c in clips.iter().filter(|c| c.entry.kind == ClipKind::Silence) {
        assert!(c.samples.iter().all(|&s| s == 0.0), "{}", c.id());
    }
    for c in clips.iter().filter(|c| c.entry.kind == ClipKind::Speech) {
        assert!(c.duration() > 1.0, "{}", c.id());
        let peak = c.samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.1, "{} peaks at {peak}", c.id());
    }
    for text in [
        "Siobhan",
        "twenty five",
        "two thousand and six",
        "fifty percent",
    ] {
        assert!(clips.iter().any(|c| c.entry.text.contains(text)), "{text}");
    }
}

#[test]
fn the_corpus_folder_stays_small() {
    let mut total = 0;
    for entry in fs::read_dir(Corpus::source_dir().join("clips")).unwrap() {
        total += entry.unwrap().metadata().unwrap().len();
    }
    // About 4 MB of synthetic clips and 3.7 MB of real recordings (the longest 44 s).
    assert!(total < 8_500_000, "{total} bytes");
}

/// A corpus folder in a temporary directory with one clip, `en-hello`, and the given manifest.
fn temp_corpus(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("clips")).unwrap();
    fs::copy(
        Corpus::source_dir().join("clips/en-hello.wav"),
        dir.path().join("clips/en-hello.wav"),
    )
    .unwrap();
    fs::write(dir.path().join("clips.toml"), manifest).unwrap();
    dir
}

const HELLO: &str = r#"
[[clips]]
id = "en-hello"
file = "clips/en-hello.wav"
kind = "speech"
text = "Hello world."
language = "en"
voice = "en-us"
source = { tool = "espeak-ng", version = "1.51", speed = 150 }
"#;

fn load_error(dir: &tempfile::TempDir) -> String {
    Corpus::load(dir.path()).unwrap_err().to_string()
}

#[test]
fn loader_errors_name_the_file() {
    let missing = tempfile::tempdir().unwrap();
    let error = Corpus::load(missing.path()).unwrap_err();
    assert!(matches!(error, CorpusError::Io { .. }));
    assert!(error.to_string().contains("clips.toml"), "{error}");

    let dir = temp_corpus(&HELLO.replace("voice =", "speaker ="));
    let error = load_error(&dir);
    assert!(
        error.contains("clips.toml") && error.contains("speaker"),
        "{error}"
    );

    let dir = temp_corpus(&HELLO.replace("clips/en-hello.wav", "clips/nope.wav"));
    assert!(load_error(&dir).contains("nope.wav"));

    let dir = temp_corpus(&format!("{HELLO}{HELLO}"));
    assert!(load_error(&dir).contains("appears twice"));

    let dir = temp_corpus(&HELLO.replace("language = \"en\"", "language = \"english\""));
    assert!(load_error(&dir).contains("ISO 639-1"));

    let dir = temp_corpus(HELLO);
    write_wav(
        &dir.path().join("clips/en-hello.wav"),
        &[0.0; 100],
        44_100,
        2,
    );
    let error = load_error(&dir);
    assert!(
        error.contains("en-hello.wav") && error.contains("44100 Hz"),
        "{error}"
    );

    // A clip whose samples stop before its header says they do.
    let dir = temp_corpus(HELLO);
    let clip = dir.path().join("clips/en-hello.wav");
    let whole = fs::read(&clip).unwrap();
    fs::write(&clip, &whole[..whole.len() - 1_000]).unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains("en-hello.wav") && error.contains("end early"),
        "{error}"
    );

    // A header claiming the most samples a WAV file can hold is refused before anything the
    // size of its claim is allocated.
    let mut claiming = whole.clone();
    let data = claiming.windows(4).position(|w| w == b"data").unwrap();
    claiming[data + 4..data + 8].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    fs::write(&clip, &claiming).unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains("en-hello.wav") && error.contains("declares 4294967280 bytes"),
        "{error}"
    );
}

#[test]
fn a_clip_is_read_as_its_samples_scaled_to_one() {
    let path = Corpus::source_dir().join("clips/en-hello.wav");
    let expected: Vec<f32> = hound::WavReader::open(&path)
        .unwrap()
        .into_samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    let dir = temp_corpus(HELLO);
    let corpus = Corpus::load(dir.path()).unwrap();
    assert!(expected.len() > 16_000);
    assert_eq!(
        corpus.clip("en-hello").unwrap().samples.as_ref(),
        &expected[..]
    );
}

#[test]
fn recordings_are_loaded_from_the_recordings_folder() {
    let dir = temp_corpus(HELLO);
    let recordings = dir.path().join("recordings");
    fs::create_dir(&recordings).unwrap();
    let mut recording = Recording::new("whisper", "tiny.en");
    recording.clips.insert("en-hello".into(), hello_output());
    recording.save(&recordings).unwrap();
    let corpus = Corpus::load(dir.path()).unwrap();
    assert_eq!(corpus.recording("tiny.en"), Some(&recording));
    assert_eq!(corpus.recordings().count(), 1);

    // A recording that names a clip the corpus lacks is refused, naming the file.
    recording.clips.insert("en-gone".into(), hello_output());
    recording.save(&recordings).unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains("tiny.en.json") && error.contains("en-gone"),
        "{error}"
    );
}

fn hello_output() -> RecordedClip {
    RecordedClip {
        duration: 1.26,
        language: Some("en".into()),
        processing_time: 1.31,
        segments: vec![Segment {
            start: 0.0,
            end: 1.1,
            text: " Hello world.".into(),
        }],
        text: " Hello world.".into(),
    }
}

#[test]
fn a_recording_is_pretty_json_with_sorted_keys() {
    let mut recording = Recording::new("whisper", "base");
    recording.clips.insert("z-last".into(), hello_output());
    recording.clips.insert(
        "a-first".into(),
        RecordedClip {
            language: None,
            ..hello_output()
        },
    );
    let json = recording.to_json();
    assert!(json.ends_with("}\n"));
    let keys: Vec<&str> = json
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('"'))
        .filter_map(|l| l.split_once("\":").map(|(k, _)| k))
        .collect();
    assert_eq!(
        keys,
        [
            "clips",
            "a-first",
            "duration",
            "processing_time",
            "segments",
            "end",
            "start",
            "text",
            "text",
            "z-last",
            "duration",
            "language",
            "processing_time",
            "segments",
            "end",
            "start",
            "text",
            "text",
            "engine",
            "model"
        ],
        "no language key when there is none"
    );
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sorted: BTreeMap<String, serde_json::Value> =
        serde_json::from_value(value.clone()).unwrap();
    assert_eq!(
        sorted.keys().collect::<Vec<_>>(),
        ["clips", "engine", "model"]
    );
    let back = Recording::from_json(std::path::Path::new("base.json"), &json).unwrap();
    assert_eq!(back, recording);
}

#[test]
fn bad_recordings_are_refused_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, json: &str| {
        let path = dir.path().join(name);
        fs::write(&path, json).unwrap();
        Recording::load(&path).unwrap_err().to_string()
    };
    let error = write("tiny.en.json", "{ not json");
    assert!(error.contains("tiny.en.json"), "{error}");
    let error = write(
        "base.json",
        r#"{"clips":{},"engine":"whisper","model":"tiny.en"}"#,
    );
    assert!(
        error.contains("base.json") && error.contains("'tiny.en'"),
        "{error}"
    );
    let mut recording = Recording::new("whisper", "small");
    recording.clips.insert(
        "en-hello".into(),
        RecordedClip {
            processing_time: -1.0,
            ..hello_output()
        },
    );
    let error = write("small.json", &recording.to_json());
    assert!(error.contains("clips.en-hello.processing_time"), "{error}");
    recording.clips.insert(
        "en-hello".into(),
        RecordedClip {
            segments: vec![Segment {
                start: 2.0,
                end: 1.0,
                text: String::new(),
            }],
            ..hello_output()
        },
    );
    let error = write("small.json", &recording.to_json());
    assert!(error.contains("clips.en-hello.segments[0]"), "{error}");
    let error = write(
        "medium.json",
        r#"{"clips":{},"engine":"whisper","model":"medium","extra":1}"#,
    );
    assert!(error.contains("extra"), "{error}");
}

#[test]
fn the_fixture_recording_loads_into_the_corpus() {
    let corpus = corpus_with_recording();
    let recording = corpus.recording("tiny.en").unwrap();
    assert_eq!(recording.engine, "whisper");
    assert!(recording.clips.contains_key("en-siobhan"));
}
