//! The loop guard on the real whisper engine and real voices: on every path (fitted window with
//! its retries, the full window with voice activity detection off (on the real voices), timed
//! words, translation on the multilingual model) no clip of the corpus comes back with a
//! repeated pattern, a text that compresses over 2.4, a run of six words said twice or a
//! segment faster than speech, with the model people get (tiny.en q8_0), and the real voices
//! (as they are and with quiet after them) on every weight type of tiny.en and on base; a real recording that makes tiny.en
//! loop through a 5 s window is heard again through a wider one and reads right (so is one whose
//! fitted window makes every tiny.en say its last phrase twice), and without
//! retries (or in a provisional pass of live audio) its loop is cut out; a provisional pass
//! shows the words of an open chunk whose edge cuts a word, where a committed pass would take
//! them for silence, and noise stays silent either way.
//! Skipped without VERBATIM_TEST_MODELS.

#![cfg(feature = "whisper")]

use crate::common;

use common::engine::hear;
use common::{test_models, test_models_with_base};
use verbatim::audio::vad::Chunker;
use verbatim::audio::vad::chunks::Limits;
use verbatim::engine::guard::{self, MAX_COMPRESSION_RATIO};
use verbatim::engine::whisper::{Recovery, WhisperEngine};
use verbatim::engine::words::compression_ratio;
use verbatim::engine::{Engine, EngineOutput, EngineRequest, Task};
use verbatim::transcribe::MIN_PROVISIONAL_SAMPLES;
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim_sim::{Clip, Corpus, word_errors};

/// The clip through `engine` as the server hears it.
fn hear_clip(
    engine: &WhisperEngine,
    model: &str,
    clip: &Clip,
    vad: bool,
    task: Task,
    words: bool,
) -> EngineOutput {
    let language = &clip.entry.language;
    hear(engine, model, &clip.samples, vad, language, task, words)
}

/// No loop in `output`: no repeated pattern, no text that compresses too well, no segment said
/// three times.
fn check_no_loop(output: &EngineOutput, what: &str) {
    assert_eq!(
        guard::repetition(&output.text),
        None,
        "{what}: {}",
        output.text
    );
    assert!(
        compression_ratio(&output.text) <= MAX_COMPRESSION_RATIO,
        "{what}: {}",
        output.text
    );
    assert!(
        !guard::trouble(&output.segments, 600.0).is_some_and(|t| t.is_loop()),
        "{what}: {}",
        output.text
    );
}

/// The model `./scripts/serve` installs and people run.
const DEFAULT_MODEL: &str = "tiny.en-q8_0";

/// `text`'s words, lower case, letters and digits only.
fn plain_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        })
        .filter(|w: &String| !w.is_empty())
        .collect()
}

/// The first run of `shortest` or more words said twice in a row in `words`.
fn run_said_twice(words: &[String], shortest: usize) -> Option<String> {
    (shortest..=words.len() / 2).find_map(|run| {
        (0..=words.len() - 2 * run)
            .find(|&start| words[start..start + run] == words[start + run..start + 2 * run])
            .map(|start| words[start..start + run].join(" "))
    })
}

/// Nothing said twice that was said once: no run of six or more words twice in a row (unless
/// the speaker said something twice in a row: `reference`, the clip's text, shows it), and no
/// segment holding more words than anyone says in its time.
fn check_said_once(output: &EngineOutput, reference: &str, what: &str) {
    if run_said_twice(&plain_words(reference), 3).is_none() {
        let twice = run_said_twice(&plain_words(&output.text), 6);
        assert_eq!(twice, None, "{what}: said twice: {}", output.text);
    }
    for segment in &output.segments {
        let seconds = (segment.end - segment.start).max(0.0);
        let count = segment.text.split_whitespace().count() as f64;
        assert!(
            count <= 4.0 + 6.0 * seconds,
            "{what}: {count} words in {seconds:.2} s: {}",
            segment.text
        );
    }
}

/// `samples` with `seconds` of near silence after them (a room's floor, far under any voice),
/// where whisper may say the text it just heard again.
fn with_quiet_after(samples: &[f32], seconds: f64) -> Vec<f32> {
    let mut quiet = samples.to_vec();
    let mut state: u32 = 12345;
    quiet.extend((0..(seconds * 16_000.0) as usize).map(|_| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 24) as f32 * 2e-4 - 1e-4
    }));
    quiet
}

#[test]
fn no_path_returns_a_loop_on_any_english_clip() {
    let Some(models) = test_models() else { return };
    assert!(
        common::installed(&models, DEFAULT_MODEL),
        "scripts/test installs {DEFAULT_MODEL}"
    );
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let engine = WhisperEngine::new(models, common::ENGINE_THREADS);
    let english = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.language == "en" && c.duration() < 30.0);
    let (mut heard, mut full_windows) = (0, 0);
    for clip in english {
        // The full 30 s window (detection off) costs three times a fitted one, and synthetic
        // voices never made whisper loop in it: it hears the real voices, ALSA's four channel
        // names (one voice, two words each) through one of them.
        let human = clip.entry.voice == "human";
        let channel_name_again =
            ["real-front-right", "real-rear-center", "real-side-left"].contains(&clip.id());
        // The fitted window reads the same text with timed words as without (DTW only times
        // it; `word_timing` checks that): heard here with them, and the real voices without
        // them in the test below.
        for (vad, words) in [(true, true), (false, false)] {
            if !vad && (!human || channel_name_again) {
                continue;
            }
            full_windows += usize::from(!vad);
            let output = hear_clip(&engine, DEFAULT_MODEL, clip, vad, Task::Transcribe, words);
            let what = format!("{} vad={vad} words={words}", clip.id());
            check_no_loop(&output, &what);
            check_said_once(&output, &clip.entry.text, &what);
            heard += 1;
        }
    }
    assert!(heard >= 40 && full_windows >= 10, "{heard} {full_windows}");
}

/// Every weight type of tiny.en and base, on every real voice: no loop, nothing said twice, no
/// segment faster than speech. Each voice is heard once by each model, as it is or with quiet
/// after it, taking turns from voice to voice and from model to model, so each weight type meets
/// both and each voice meets both twice.
#[test]
fn every_weight_type_and_base_say_real_voices_once() {
    let Some(models) = test_models_with_base() else {
        return;
    };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let engine = WhisperEngine::new(models.clone(), common::ENGINE_THREADS);
    let human: Vec<&Clip> = corpus
        .clips()
        .iter()
        .filter(|c| c.entry.language == "en" && c.entry.voice == "human" && c.duration() < 30.0)
        .collect();
    assert!(human.len() >= 8, "{} real voices", human.len());
    for (turn, model) in ["tiny.en", "tiny.en-q5_1", "base", DEFAULT_MODEL]
        .into_iter()
        .enumerate()
    {
        assert!(
            common::installed(&models, model),
            "scripts/test installs {model}"
        );
        for (n, clip) in human.iter().enumerate() {
            let as_is = (n + turn) % 2 == 0;
            let (samples, tail) = if as_is {
                (clip.samples.to_vec(), "")
            } else {
                (with_quiet_after(&clip.samples, 2.5), " +2.5 s quiet")
            };
            let output = hear(
                &engine,
                model,
                &samples,
                true,
                "en",
                Task::Transcribe,
                false,
            );
            let what = format!("{model} {}{tail}", clip.id());
            check_no_loop(&output, &what);
            check_said_once(&output, &clip.entry.text, &what);
        }
    }
}

#[test]
fn a_real_voice_that_loops_in_a_short_window_is_heard_again_and_reads_right() {
    let Some(models) = test_models() else { return };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let clip = corpus.clip("real-goforward").unwrap();
    let engine = WhisperEngine::new(models.clone(), common::ENGINE_THREADS);
    let output = hear_clip(&engine, "tiny.en", clip, true, Task::Transcribe, false);
    let retries = engine.retries();
    assert!(
        retries.chunks >= 1,
        "{retries:?}: the 5 s window no longer loops"
    );
    assert_eq!(retries.cut, 0, "{retries:?}");
    let (errors, _) = word_errors(
        &normalize_numbers(&clip.entry.text),
        &normalize_numbers(&output.text),
    );
    assert_eq!(errors, 0, "{}", output.text);

    // With no retry at all, the loop is cut out where it starts.
    let cutting = WhisperEngine::new(models.clone(), common::ENGINE_THREADS)
        .with_recovery(Recovery::parse("none").unwrap());
    let output = hear_clip(&cutting, "tiny.en", clip, true, Task::Transcribe, false);
    assert_eq!(cutting.retries().cut, 1, "{:?}", cutting.retries());
    check_no_loop(&output, "no retries");
    assert!(
        output.text.to_lowercase().starts_with("go forward"),
        "{}",
        output.text
    );

    // A provisional pass (live text the next pass replaces) is not heard again either: the
    // engine with its usual retries cuts the loop, in one pass.
    let live = WhisperEngine::new(models, common::ENGINE_THREADS);
    let request = EngineRequest {
        provisional: true,
        ..common::engine::request(&clip.samples, true, "en", Task::Transcribe, false)
    };
    let output = live.transcribe("tiny.en", &request).unwrap();
    let retries = live.retries();
    assert_eq!((retries.passes, retries.cut), (0, 1), "{retries:?}");
    check_no_loop(&output, "provisional");
}

/// A reader trimmed to her last word (LJSpeech's LJ001-0003): every weight type of tiny.en,
/// through a window that ends where her voice does, reads her last phrase twice ("... by a
/// similar process, by a similar process."); the end of the chunk is heard again with quiet
/// after it, which says it once. Her last phrase really said twice (its audio again after it)
/// is kept twice.
#[test]
fn a_voice_trimmed_to_its_last_word_has_its_last_phrase_said_once() {
    let Some(models) = test_models() else { return };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let clip = corpus.clip("real-similar-process").unwrap();
    for model in ["tiny.en", DEFAULT_MODEL, "tiny.en-q5_1"] {
        assert!(
            common::installed(&models, model),
            "scripts/test installs {model}"
        );
        let engine = WhisperEngine::new(models.clone(), common::ENGINE_THREADS);
        let output = hear_clip(&engine, model, clip, true, Task::Transcribe, false);
        assert!(
            !guard::ends_in_its_last_words_twice(&output.text),
            "{model}: {}",
            output.text
        );
        let retries = engine.retries();
        assert!(
            retries.ends >= 1 && retries.chunks == 0 && retries.cut == 0,
            "{model}: {retries:?}: the fitted window no longer says the end twice"
        );
        let (errors, words) = word_errors(
            &normalize_numbers(&clip.entry.text),
            &normalize_numbers(&output.text),
        );
        assert!(errors <= 2, "{model}: {errors} of {words}: {}", output.text);
    }
    let engine = WhisperEngine::new(models.clone(), common::ENGINE_THREADS);
    let timed = hear_clip(&engine, DEFAULT_MODEL, clip, true, Task::Transcribe, true);
    let words: Vec<_> = timed.segments.iter().flat_map(|s| &s.words).collect();
    let phrase = &words[words.len() - 4..];
    let said: Vec<String> = phrase
        .iter()
        .map(|w| w.word.trim().to_lowercase())
        .collect();
    assert_eq!(said[..3], ["by", "a", "similar"], "{}", timed.text);
    let from = (phrase[0].start * 16_000.0) as usize;
    let mut twice = clip.samples.to_vec();
    twice.extend_from_slice(&clip.samples[from.saturating_sub(1_600)..]);
    let output = hear(
        &engine,
        DEFAULT_MODEL,
        &twice,
        true,
        "en",
        Task::Transcribe,
        false,
    );
    assert!(
        guard::ends_in_its_last_words_twice(&output.text),
        "said twice, heard once: {}",
        output.text
    );
}

#[test]
fn translation_on_the_multilingual_model_returns_no_loop() {
    let Some(models) = test_models_with_base() else {
        return;
    };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let engine = WhisperEngine::new(models, common::ENGINE_THREADS);
    // One clip a language: a second in the same language takes the same path.
    let mut languages = Vec::new();
    let foreign = corpus.clips().iter().filter(|c| {
        let language = c.entry.language.as_str();
        ["de", "fr", "es"].contains(&language) && !languages.contains(&language) && {
            languages.push(language);
            true
        }
    });
    for clip in foreign {
        let output = hear_clip(&engine, "base", clip, true, Task::Translate, false);
        check_no_loop(&output, clip.id());
    }
}

/// `samples` heard as live audio's open chunk: one chunk, trimmed to speech; `provisional`: for
/// tentative text.
fn hear_open_chunk(engine: &WhisperEngine, samples: &[f32], provisional: bool) -> String {
    let request = EngineRequest {
        chunks: std::iter::once(0..samples.len()).collect(),
        provisional,
        ..common::engine::request(samples, true, "en", Task::Transcribe, false)
    };
    let output = engine.transcribe("tiny.en", &request).unwrap();
    output.text.trim().to_string()
}

#[test]
fn a_provisional_pass_shows_words_the_open_chunks_edge_cuts_and_noise_stays_silent() {
    let Some(models) = test_models() else { return };
    let corpus = Corpus::load(&Corpus::source_dir()).unwrap();
    let engine = WhisperEngine::new(models, common::ENGINE_THREADS);
    // Each live chunk of a real reading, heard as its open chunk grows (0.1 s steps from the
    // 0.6 s of the first provisional pass): where the edge cuts a word, whisper's no-speech
    // rule takes the guess for silence; the provisional pass shows it.
    let clip = corpus.clip("real-two-cities").unwrap();
    let chunks = Chunker::within(true, Limits::LIVE).chunks_of(&clip.samples);
    let mut shown = Vec::new();
    for chunk in &chunks {
        for tenths in 0..=10 {
            let length = MIN_PROVISIONAL_SAMPLES + tenths * 1_600;
            let prefix = &chunk.samples[..length.min(chunk.samples.len())];
            if hear_open_chunk(&engine, prefix, false).is_empty() {
                let tentative = hear_open_chunk(&engine, prefix, true);
                if !tentative.is_empty() {
                    shown.push(tentative);
                }
            }
        }
    }
    assert!(
        !shown.is_empty(),
        "no cut word shown in {} chunks",
        chunks.len()
    );
    // Noise, and the real noise recording, heard as if it had fooled the voice detection.
    for id in ["noise-white", "noise-pink", "noise-brown", "real-noise"] {
        let samples = &corpus.clip(id).unwrap().samples;
        for tenths in [6, 10, 15, 20] {
            let prefix = &samples[..(tenths * 1_600).min(samples.len())];
            assert_eq!(hear_open_chunk(&engine, prefix, true), "", "{id} {tenths}");
        }
    }
}
