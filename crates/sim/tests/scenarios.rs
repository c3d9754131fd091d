//! Scenario files: every example parses and runs against the corpus, their values come through,
//! and invalid scenarios are refused with errors that name the key.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use verbatim_sim::scenario::DEFAULT_SCENARIO;
use verbatim_sim::{
    After, AppContext, Clock, Item, Latency, ModelState, OverrunFault, Playback, RealClock,
    Scenario, ScenarioError, Simulation,
};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

#[test]
fn every_example_parses_and_plays_from_the_corpus() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(example("")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            scenario.check_clips(&corpus()).unwrap();
            Simulation::load(Some(&path), Arc::new(RealClock::new())).unwrap();
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "default.toml",
            "dictation.toml",
            "faults.toml",
            "slow-download.toml"
        ]
    );
}

#[test]
fn the_default_scenario_is_the_default_file() {
    let default = Scenario::default_scenario();
    let mut from_file = Scenario::load(&example("default.toml")).unwrap();
    from_file.path = None;
    assert_eq!(default, from_file);
    assert_eq!(Scenario::parse(DEFAULT_SCENARIO).unwrap(), default);
    assert_eq!(default.engine.selected_model.as_deref(), Some("tiny.en"));
    assert_eq!(default.models["tiny.en"], ModelState::Present);
    assert_eq!(default.engine.latency, Latency::Recorded);
    assert_eq!(default.microphone.sample_rate, 48_000);
    assert!(default.microphone.present && default.system_audio.present);
    assert_eq!(default.corpus_dir(), verbatim_sim::Corpus::source_dir());
}

#[test]
fn example_values_come_through() {
    let faults = Scenario::load(&example("faults.toml")).unwrap();
    assert_eq!(faults.microphone.faults.lost_after, Some(2.5));
    assert_eq!(
        faults.microphone.faults.overruns,
        [OverrunFault {
            at: 1.0,
            samples: 1600
        }]
    );
    assert!(!faults.system_audio.present);
    assert_eq!(faults.engine.fail_requests, [2]);

    let slow = Scenario::load(&example("slow-download.toml")).unwrap();
    assert_eq!(
        slow.models["tiny.en"],
        ModelState::Download { seconds: 3.0 }
    );
    assert_eq!(slow.models["base"], ModelState::Absent);
    assert_eq!(slow.engine.latency, Latency::RealTimeFactor(0.5));

    let dictation = Scenario::load(&example("dictation.toml")).unwrap();
    assert_eq!(
        dictation.app_context,
        AppContext {
            app_name: Some("Firefox".into()),
            app_id: Some("org.mozilla.firefox".into()),
            url: Some("https://mail.example.com/compose".into()),
        }
    );
    assert_eq!(dictation.microphone.playback, Playback::Resume);
    assert_eq!(dictation.microphone.after, After::Loop);
    assert_eq!(dictation.microphone.sample_rate, 44_100);
    assert_eq!(dictation.engine.latency, Latency::Fixed(0.3));
    assert_eq!(dictation.corpus, Some(example("../../../corpus")));
    assert_eq!(dictation.microphone.items[1], Item::Silence(0.75));
}

#[test]
fn an_empty_scenario_has_documented_defaults() {
    let empty = Scenario::parse("").unwrap();
    assert!(empty.microphone.present && empty.microphone.items.is_empty());
    assert_eq!(empty.microphone.sample_rate, 48_000);
    assert_eq!(empty.microphone.after, After::Silence);
    assert_eq!(empty.microphone.playback, Playback::Restart);
    assert!(empty.models.is_empty());
    assert_eq!(empty.engine.selected_model, None);
    assert_eq!(empty.app_context, AppContext::default());
    let tone = Scenario::parse("[microphone]\nitems = [{ tone = 440, seconds = 1 }]").unwrap();
    assert_eq!(
        tone.microphone.items,
        [Item::Tone {
            hz: 440.0,
            seconds: 1.0,
            volume: 0.25
        }]
    );
    let overrun = Scenario::parse(
        "[system_audio]\nsample_rate = 44100\nfaults = { overruns = [{ at_seconds = 1 }] }",
    )
    .unwrap();
    assert_eq!(
        overrun.system_audio.faults.overruns[0].samples, 4410,
        "100 ms by default"
    );
}

/// Invalid scenarios: each error must name this key.
const INVALID: &[(&str, &str)] = &[
    ("[microphone]\nsample_rate = 1000", "microphone.sample_rate"),
    (
        "[system_audio]\nsample_rate = -48000",
        "system_audio.sample_rate",
    ),
    (
        "[microphone]\nitems = [{ silence = -1.0 }]",
        "microphone.items[0].silence",
    ),
    (
        "[microphone]\nitems = [{ silence = 1.0 }, { tone = 9000, seconds = 1 }]\nsample_rate = 16000",
        "microphone.items[1].tone",
    ),
    (
        "[microphone]\nitems = [{ tone = 440 }]",
        "microphone.items[0].seconds",
    ),
    (
        "[microphone]\nitems = [{ tone = 440, seconds = 1, volume = 2 }]",
        "microphone.items[0].volume",
    ),
    (
        "[microphone]\nitems = [{ clip = \"en-hello\", silence = 1 }]",
        "microphone.items[0]",
    ),
    ("[microphone]\nitems = [{}]", "microphone.items[0]"),
    (
        "[microphone]\nitems = [{ clip = \"en-hello\", seconds = 1 }]",
        "microphone.items[0].seconds",
    ),
    ("[microphone]\nafter = \"repeat\"", "microphone.after"),
    ("[microphone]\nplayback = \"rewind\"", "microphone.playback"),
    (
        "[microphone.faults]\nlost_after_seconds = nan",
        "microphone.faults.lost_after_seconds",
    ),
    (
        "[microphone.faults]\noverruns = [{ at_seconds = 1.0, samples = 0 }]",
        "microphone.faults.overruns[0].samples",
    ),
    (
        "[microphone]\nsample_rate = 16000\n[microphone.faults]\noverruns = [{ at_seconds = 1.0, samples = 16000 }, { at_seconds = 1.5 }]",
        "microphone.faults.overruns[1].at_seconds",
    ),
    (
        "[engine]\nlatency_seconds = 1\nreal_time_factor = 0.5",
        "engine.real_time_factor",
    ),
    ("[engine]\nreal_time_factor = -1", "engine.real_time_factor"),
    ("[engine]\nlatency_seconds = -0.5", "engine.latency_seconds"),
    (
        "[engine]\nfail_requests = [1, 0]",
        "engine.fail_requests[1]",
    ),
    ("[engine]\nselected_model = \"\"", "engine.selected_model"),
    (
        "[models]\n\"tiny.en\" = \"installed\"",
        "models.\"tiny.en\"",
    ),
    (
        "[models]\nsmall = { download_seconds = -3 }",
        "models.\"small\".download_seconds",
    ),
    (
        "[models]\nsmall = { download_seconds = \"slow\" }",
        "models.\"small\".download_seconds",
    ),
    (
        "[models]\nsmall = { seconds = 3 }",
        "models.\"small\".seconds",
    ),
];

#[test]
fn invalid_values_are_refused_naming_the_key() {
    for (text, key) in INVALID {
        let error = Scenario::parse(text).expect_err(text);
        assert_eq!(error.key(), Some(*key), "{text}: {error}");
        assert!(
            error.to_string().starts_with(&format!("scenario: {key}: ")),
            "{error}"
        );
    }
}

#[test]
fn unknown_keys_and_wrong_types_are_refused_naming_the_key() {
    for (text, key) in [
        ("[microphone]\nvolume = 3", "volume"),
        ("[microphone.faults]\nlost_after = 3", "lost_after"),
        ("[engine]\nlatency = 0.2", "latency"),
        ("[app_context]\nbundle = \"x\"", "bundle"),
        ("speed = 2", "speed"),
        ("[microphone]\npresent = \"yes\"", "present"),
        ("[microphone]\nitems = [{ clip = 3 }]", "clip"),
    ] {
        let error = Scenario::parse(text).expect_err(text);
        assert!(
            matches!(error, ScenarioError::Syntax { .. }),
            "{text}: {error}"
        );
        assert!(error.to_string().contains(key), "{text}: {error}");
    }
}

#[test]
fn an_unknown_clip_is_refused_naming_the_item() {
    let scenario =
        Scenario::parse("[system_audio]\nitems = [{ silence = 1 }, { clip = \"en-nope\" }]")
            .unwrap();
    let error = scenario.check_clips(&corpus()).unwrap_err();
    assert_eq!(error.key(), Some("system_audio.items[1].clip"));
    assert!(error.to_string().contains("en-nope"), "{error}");
    let clock: Arc<dyn Clock> = Arc::new(RealClock::new());
    assert!(Simulation::new(scenario, corpus(), clock).is_err());
}

#[test]
fn file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let error = Scenario::load(&missing).unwrap_err();
    assert!(error.to_string().contains("missing.toml"), "{error}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[engine]\nfail_requests = [0]\n").unwrap();
    let error = Scenario::load(&bad).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: engine.fail_requests[0]: ", bad.display())),
        "{error}"
    );
    std::fs::write(&bad, "corpus = \"elsewhere\"\n").unwrap();
    let error = Simulation::load(Some(&bad), Arc::new(RealClock::new())).unwrap_err();
    assert!(error.to_string().contains("elsewhere"), "{error}");
}
