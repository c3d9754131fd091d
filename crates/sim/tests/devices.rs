//! Simulated devices on the virtual clock: no sample lost or repeated whatever the chunk sizes,
//! exact delivery up to a lost device, overruns, playback modes, determinism, and the whole path
//! from a scenario's microphone to the replay engine.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use proptest::prelude::*;
use verbatim_sim::resample_linear;
use verbatim_sim::{
    After, Chunk, Clock, Corpus, DeviceError, DeviceKind, Faults, Item, Overrun, OverrunFault,
    Playback, Playlist, SimDevice, Simulation, VirtualClock,
};

fn make_device(
    items: &[Item],
    rate: u32,
    after: After,
    faults: Faults,
    playback: Playback,
) -> (SimDevice, Arc<VirtualClock>, Playlist) {
    let clock = Arc::new(VirtualClock::new());
    let playlist = Playlist::new(items, &corpus(), rate, after).unwrap();
    let device = SimDevice::new(
        DeviceKind::Microphone,
        true,
        playlist.clone(),
        faults,
        playback,
        Arc::clone(&clock) as Arc<dyn Clock>,
    );
    (device, clock, playlist)
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        prop::sample::select(vec!["en-hello", "fr-weather", "de-morning"])
            .prop_map(|id| Item::Clip(id.to_owned())),
        (0u32..2000).prop_map(|ms| Item::Silence(f64::from(ms) / 1000.0)),
        (50u32..3000, 0u32..1500).prop_map(|(hz, ms)| Item::Tone {
            hz: f64::from(hz),
            seconds: f64::from(ms) / 1000.0,
            volume: 0.5,
        }),
    ]
}

fn rate() -> impl Strategy<Value = u32> {
    prop::sample::select(vec![8_000u32, 16_000, 22_050, 44_100, 48_000])
}

fn after() -> impl Strategy<Value = After> {
    prop_oneof![Just(After::Silence), Just(After::Loop)]
}

/// (milliseconds to advance, most samples to read) per step.
fn steps() -> impl Strategy<Value = Vec<(u64, usize)>> {
    prop::collection::vec((0u64..700, 0usize..20_000), 1..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reads_in_any_chunk_sizes_yield_exactly_the_items(
        items in prop::collection::vec(item(), 0..5),
        rate in rate(),
        after in after(),
        steps in steps(),
    ) {
        let (device, clock, playlist) = make_device(&items, rate, after, Faults::default(), Playback::Restart);
        let mut capture = device.open().unwrap();
        let mut got = Vec::new();
        for (ms, max) in steps {
            clock.advance(Duration::from_millis(ms));
            let chunk = capture.read(max).unwrap();
            prop_assert!(chunk.samples.len() <= max);
            prop_assert!(chunk.overruns.is_empty());
            got.extend(chunk.samples);
        }
        got.extend(capture.read_available().unwrap().samples);
        let expected_len = clock.now().as_millis() as u64 * u64::from(rate) / 1000;
        prop_assert_eq!(got.len() as u64, expected_len);
        prop_assert_eq!(capture.delivered(), expected_len);
        prop_assert!(got == playlist.render(got.len()), "samples differ from the playlist");
    }

    #[test]
    fn a_lost_device_delivers_exactly_its_seconds_then_fails(
        items in prop::collection::vec(item(), 0..4),
        rate in rate(),
        lost_ms in 0u64..5000,
        steps in steps(),
    ) {
        let lost = lost_ms as f64 / 1000.0;
        let faults = Faults { lost_after: Some(lost), overruns: Vec::new() };
        let (device, clock, playlist) = make_device(&items, rate, After::Silence, faults, Playback::Restart);
        let mut capture = device.open().unwrap();
        let mut got = Vec::new();
        let mut failed = false;
        for (ms, max) in steps.into_iter().chain(std::iter::repeat_n((400, usize::MAX), 20)) {
            clock.advance(Duration::from_millis(ms));
            match capture.read(max) {
                Ok(chunk) => got.extend(chunk.samples),
                Err(error) => {
                    let lost = matches!(error, DeviceError::Lost { kind: DeviceKind::Microphone, .. });
                    prop_assert!(lost, "unexpected error {:?}", error);
                    failed = true;
                    break;
                }
            }
        }
        prop_assert!(failed, "the device was never lost");
        prop_assert_eq!(got.len() as u64, (lost * f64::from(rate)).round() as u64);
        prop_assert!(got == playlist.render(got.len()));
        prop_assert!(capture.read(100).is_err(), "reads keep failing");
    }

    #[test]
    fn the_same_scenario_and_reads_give_the_same_samples(
        items in prop::collection::vec(item(), 0..4),
        rate in rate(),
        after in after(),
        steps in steps(),
        overrun_ms in 0u64..3000,
    ) {
        let faults = Faults {
            lost_after: Some(6.0),
            overruns: vec![OverrunFault { at: overrun_ms as f64 / 1000.0, samples: 777 }],
        };
        let run = || {
            let (device, clock, _) = make_device(&items, rate, after, faults.clone(), Playback::Restart);
            let mut capture = device.open().unwrap();
            steps
                .iter()
                .map(|&(ms, max)| {
                    clock.advance(Duration::from_millis(ms));
                    capture.read(max)
                })
                .collect::<Vec<Result<Chunk, DeviceError>>>()
        };
        prop_assert_eq!(run(), run());
    }
}

fn tone_items() -> Vec<Item> {
    vec![
        Item::Tone {
            hz: 440.0,
            seconds: 1.5,
            volume: 0.5,
        },
        Item::Tone {
            hz: 660.0,
            seconds: 1.5,
            volume: 0.5,
        },
    ]
}

#[test]
fn an_overrun_drops_its_samples_and_is_reported_once() {
    let faults = Faults {
        lost_after: Some(2.5),
        overruns: vec![OverrunFault {
            at: 1.0,
            samples: 1600,
        }],
    };
    let (device, clock, playlist) = make_device(
        &tone_items(),
        16_000,
        After::Silence,
        faults,
        Playback::Restart,
    );
    let mut capture = device.open().unwrap();
    let mut got = Vec::new();
    let mut overruns = Vec::new();
    loop {
        clock.advance(Duration::from_millis(130));
        match capture.read(3000) {
            Ok(chunk) => {
                got.extend(chunk.samples);
                overruns.extend(chunk.overruns);
            }
            Err(error) => {
                assert_eq!(
                    error.to_string(),
                    "the microphone was disconnected after 2.5 s of capture"
                );
                break;
            }
        }
    }
    assert_eq!(
        overruns,
        [Overrun {
            delivered_before: 16_000,
            dropped: 1600
        }]
    );
    let full = playlist.render(40_000);
    assert_eq!(got.len(), 40_000 - 1600);
    assert_eq!(got[..16_000], full[..16_000]);
    assert_eq!(got[16_000..], full[17_600..]);
}

#[test]
fn an_absent_device_cannot_be_opened() {
    let clock = Arc::new(VirtualClock::new());
    let playlist = Playlist::new(&[], &corpus(), 48_000, After::Silence).unwrap();
    let device = SimDevice::new(
        DeviceKind::SystemAudio,
        false,
        playlist,
        Faults::default(),
        Playback::Restart,
        clock,
    );
    let error = device.open().unwrap_err();
    assert_eq!(error, DeviceError::NotFound(DeviceKind::SystemAudio));
    assert_eq!(error.to_string(), "no system audio source is available");
}

#[test]
fn captures_restart_or_resume_the_playlist() {
    for (playback, second_from) in [(Playback::Restart, 0), (Playback::Resume, 16_000)] {
        let (device, clock, playlist) = make_device(
            &tone_items(),
            16_000,
            After::Silence,
            Faults::default(),
            playback,
        );
        let mut capture = device.open().unwrap();
        clock.advance(Duration::from_secs(1));
        assert_eq!(capture.read_available().unwrap().samples.len(), 16_000);
        drop(capture);
        clock.advance(Duration::from_secs(5));
        let mut capture = device.open().unwrap();
        clock.advance(Duration::from_secs(1));
        let samples = capture.read_available().unwrap().samples;
        assert_eq!(
            samples,
            playlist.render(second_from + 16_000)[second_from..],
            "{playback:?}"
        );
    }
}

#[test]
fn items_loop_or_give_way_to_silence() {
    let items = [Item::Tone {
        hz: 1000.0,
        seconds: 0.1,
        volume: 0.5,
    }];
    let (device, clock, _) = make_device(
        &items,
        16_000,
        After::Loop,
        Faults::default(),
        Playback::Restart,
    );
    let mut capture = device.open().unwrap();
    clock.advance(Duration::from_millis(350));
    let looped = capture.read_available().unwrap().samples;
    assert_eq!(looped.len(), 5600);
    assert_eq!(looped[..1600], looped[1600..3200]);
    assert_eq!(looped[..800], looped[4800..]);

    let (device, clock, _) = make_device(
        &items,
        16_000,
        After::Silence,
        Faults::default(),
        Playback::Restart,
    );
    let mut capture = device.open().unwrap();
    clock.advance(Duration::from_millis(350));
    let once = capture.read_available().unwrap().samples;
    assert_eq!(once[..1600], looped[..1600]);
    assert!(once[1600..].iter().all(|&s| s == 0.0));
}

#[test]
fn a_clip_delivered_at_48k_comes_back_unchanged_at_16k() {
    let (device, clock, _) = make_device(
        &[Item::Clip("en-hello".into())],
        48_000,
        After::Silence,
        Faults::default(),
        Playback::Restart,
    );
    let mut capture = device.open().unwrap();
    clock.advance(Duration::from_secs(2));
    let delivered = capture.read_available().unwrap().samples;
    assert_eq!(delivered.len(), 96_000);
    let back = resample_linear(&delivered, 48_000, 16_000);
    let original = clip("en-hello");
    assert_eq!(back[..original.len()], original[..]);
}

/// The text the replay engine gives for `id` with `model`: recorded, or the script.
fn expected_text(corpus: &Corpus, model: &str, id: &str) -> String {
    match corpus.recording(model).and_then(|r| r.clips.get(id)) {
        Some(recorded) => recorded.text.trim().to_owned(),
        None => corpus.clip(id).unwrap().entry.text.clone(),
    }
}

#[test]
fn the_default_microphone_is_transcribed_as_its_two_sentences() {
    let clock = Arc::new(VirtualClock::new());
    let sim = Simulation::load(None, Arc::clone(&clock) as Arc<dyn Clock>).unwrap();
    let mut capture = sim.microphone.open().unwrap();
    assert_eq!(capture.sample_rate(), 48_000);
    let mut delivered = Vec::new();
    for _ in 0..100 {
        clock.advance(Duration::from_millis(100));
        delivered.extend(capture.read_available().unwrap().samples);
    }
    let samples = resample_linear(&delivered, 48_000, 16_000);
    let replay = sim.engine.transcribe("tiny.en", &samples).unwrap();
    let expected = format!(
        "{} {}",
        expected_text(&sim.corpus, "tiny.en", "en-siobhan"),
        expected_text(&sim.corpus, "tiny.en", "en-apples")
    );
    assert_eq!(replay.text, expected);
    assert_eq!(replay.duration, 10.0);
}

#[test]
fn the_faults_scenario_loses_the_microphone_and_fails_the_second_request() {
    let clock = Arc::new(VirtualClock::new());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/faults.toml");
    let sim = Simulation::load(Some(&path), Arc::clone(&clock) as Arc<dyn Clock>).unwrap();
    assert!(matches!(
        sim.system_audio.open(),
        Err(DeviceError::NotFound(_))
    ));
    let mut capture = sim.microphone.open().unwrap();
    clock.advance(Duration::from_secs(3));
    let chunk = capture.read_available().unwrap();
    assert_eq!(chunk.samples.len(), 40_000 - 1600);
    assert_eq!(
        chunk.overruns,
        [Overrun {
            delivered_before: 16_000,
            dropped: 1600
        }]
    );
    assert!(matches!(
        capture.read_available(),
        Err(DeviceError::Lost { .. })
    ));
    let hello = clip("en-hello");
    assert!(sim.engine.transcribe("tiny.en", &hello).is_ok());
    assert!(sim.engine.transcribe("tiny.en", &hello).is_err());
    assert!(sim.engine.transcribe("tiny.en", &hello).is_ok());
}
