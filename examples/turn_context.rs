//! Measures how a live turn (a stretch of speech a pause ended: dictation's chunks, realtime
//! sessions' turns) is best heard: alone, or with the audio around it (only the words said
//! within the turn are kept), against the whole speech as one file.
//!
//! ```text
//! VERBATIM_TEST_MODELS=~/.cache/verbatim/models \
//!     cargo run --release --example turn_context -- [--model tiny.en-q8_0] [--pause 1.5] \
//!     [--window full|FRAMES] [--after SECONDS] [--prompt-previous | --prompt-so-far] \
//!     [--guard-repeats] [--aligned [--short-under S]] [--choose] [--lead S] [--said-before] \
//!     [--said-within S] [--show] \
//!     LIST CONTEXT_SECONDS...
//! ```
//!
//! LIST: recordings, one `path<TAB>reference text` a line, joined with `--pause` seconds of silence
//! into one speech, cut into turns by the live voice activity detection. For each CONTEXT (seconds
//! of audio before the turn given with it; 0: the turn alone) prints the WER of the turns' texts
//! joined, the engine seconds, the turns whose segments straddled the turn's start (with
//! `--aligned`: where the words' times and the alignment put the turn's start more than a word
//! apart), and the same for the whole speech as one file. `--after` also gives each turn that many
//! seconds of the audio after it (what a live turn cannot have: it is committed at its pause), its
//! words dropped by their times. `--prompt-previous` also gives each turn the text kept for the
//! turn before as the initial prompt, `--prompt-so-far` every text kept so far (the engine hands
//! whisper its last 1,024 bytes); `--guard-repeats` hears a prompted turn whose text says a phrase
//! twice in a row again alone, and keeps the text that does so less often (CONTEXT is then not
//! used); `--aligned` puts whole turns in front (those that start within CONTEXT seconds of the
//! turn) and drops the words that say their kept texts again, aligned word by word rather than by
//! time; `--choose` hears each turn alone and with the turn before's text as the prompt and keeps
//! the likelier decode (CONTEXT is then not used); `--show` prints the one file's text, and every
//! turn's text and the seconds it took. `RUST_LOG=verbatim=debug` shows every attempt the loop
//! guard rejects.
//! `--short-under S` (with `--aligned`) puts the turns before in front of turns shorter than S
//! seconds only; longer turns are heard alone.
//! `--lead S` hears each turn alone after S seconds of silence (CONTEXT is then not used).
//! `--said-before` hears each turn as live dictation does: the turns that started up to 10 s
//! before it in front (`--said-within S`: S seconds), read as their kept texts (CONTEXT is then
//! not used).
//! `--window` hears every chunk through Whisper's `full` 30 s window, or a window fitted to it of
//! at least FRAMES encoder frames (default: the server's floor, 250).

#[path = "shared/args.rs"]
mod args;

use std::path::Path;
use std::time::Instant;

use verbatim::audio::decode;
use verbatim::audio::vad::chunks::Limits;
use verbatim::audio::vad::{Chunker, SpeechChunk};
use verbatim::engine::guard::avg_logprob;
use verbatim::engine::models::ModelDir;
use verbatim::engine::whisper::{DEFAULT_FLOOR_FRAMES, EncoderWindow, WhisperEngine};
use verbatim::engine::{Engine, EngineOutput, EngineRequest, LanguageChoice};
use verbatim::transcribe::numbers::normalize_numbers;
use verbatim::transcribe::said_before::{CONTEXT_SECONDS, SaidBeforeChunks};
use verbatim_sim::word_errors;

use args::Args;

const RATE: f64 = 16_000.0;
/// How long a pause lasts when live audio commits the turn before it (seconds).
const COMMIT_PAUSE: f64 = 0.72;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = Args::from_env();
    let prompt_previous = args.flag("--prompt-previous");
    let prompt_so_far = args.flag("--prompt-so-far");
    let guard_repeats = args.flag("--guard-repeats");
    let show = args.flag("--show");
    let aligned = args.flag("--aligned");
    let choose = args.flag("--choose");
    let said_before = args.flag("--said-before");
    let said_within: f64 = args
        .value("--said-within", &CONTEXT_SECONDS.to_string())
        .parse()
        .expect("--said-within seconds");
    let after: f64 = args.value("--after", "0").parse().expect("--after seconds");
    let lead: f64 = args.value("--lead", "0").parse().expect("--lead seconds");
    let short_under: f64 = args
        .value("--short-under", "inf")
        .parse()
        .expect("--short-under seconds");
    let model = args.value("--model", "tiny.en-q8_0");
    let pause: f64 = args
        .value("--pause", "1.5")
        .parse()
        .expect("--pause seconds");
    let window = match args
        .value("--window", &DEFAULT_FLOOR_FRAMES.to_string())
        .as_str()
    {
        "full" => EncoderWindow::Full,
        frames => EncoderWindow::Fitted {
            floor: frames.parse().expect("--window full or FRAMES"),
        },
    };
    let args = args.rest();
    let list = args.first().expect("LIST").clone();
    let contexts: Vec<f64> = args[1..]
        .iter()
        .map(|c| c.parse().expect("CONTEXT seconds"))
        .collect();
    let models =
        ModelDir::new(std::env::var("VERBATIM_TEST_MODELS").expect("VERBATIM_TEST_MODELS"));
    let engine = WhisperEngine::new(models, 2).with_window(window);

    let (speech, reference) = joined(Path::new(&list), pause);
    let turns = Chunker::within(true, Limits::LIVE).chunks_of(&speech);
    println!(
        "{:.1} s of speech, {} turns; model {model}",
        speech.len() as f64 / RATE,
        turns.len()
    );
    // Warm the model up.
    hear(
        &engine,
        &model,
        &speech[..16_000.min(speech.len())],
        true,
        None,
    );

    let started = Instant::now();
    let file_chunks = Chunker::new(true).chunks_of(&speech);
    let file_text: Vec<String> = file_chunks
        .iter()
        .map(|c| hear(&engine, &model, &c.samples, false, None).text)
        .collect();
    report("one file", &reference, &file_text.join(" "), started, 0);
    if show {
        println!("  one file: {}", file_text.join(" "));
    }

    for context in contexts {
        let (mut said, mut taken) = (SaidBeforeChunks::within(said_within), 0);
        let started = Instant::now();
        let mut texts = Vec::new();
        let mut straddled = 0;
        for (i, turn) in turns.iter().enumerate() {
            let turn_started = Instant::now();
            let prompt = if prompt_so_far {
                Some(texts.join(" ")).filter(|t| !t.trim().is_empty())
            } else {
                prompt_previous.then(|| texts.last().cloned()).flatten()
            };
            let (text, straddles) = if let Some(prompt) = prompt.clone().filter(|_| guard_repeats) {
                let samples = &speech[turn.range()];
                (fewer_repeats(&engine, &model, samples, prompt, show), false)
            } else if choose {
                (
                    surer(&engine, &model, &speech[turn.range()], texts.last(), show),
                    false,
                )
            } else if said_before {
                let text = hear_after_said(
                    &engine, &model, &speech, &mut said, &mut taken, turn, prompt,
                );
                (text, false)
            } else if aligned && (turn.samples.len() as f64) < short_under * RATE {
                with_turns_before(&engine, &model, &speech, &turns, &texts, i, context, prompt)
            } else if lead > 0.0 {
                let mut samples = vec![0.0; (lead * RATE) as usize];
                samples.extend_from_slice(&speech[turn.range()]);
                let heard = hear(&engine, &model, &samples, false, prompt);
                (heard.text.trim().to_string(), false)
            } else {
                let heard = Around {
                    before: context,
                    after,
                };
                with_context(&engine, &model, &speech, turn, heard, prompt)
            };
            if show {
                let (start, end) = (turn.start as f64 / RATE, turn.range().end as f64 / RATE);
                let took = turn_started.elapsed().as_secs_f64();
                println!("  [{start:.1}-{end:.1}] {took:.2} s {text}");
            }
            texts.push(text);
            straddled += usize::from(straddles);
        }
        report(
            &format!("turns, {context} s before"),
            &reference,
            &texts.join(" "),
            started,
            straddled,
        );
    }
}

/// How much of the speech around a turn it is heard with (seconds).
#[derive(Clone, Copy, Default)]
struct Around {
    before: f64,
    after: f64,
}

/// The turn heard with up to `around.before` seconds of the audio before it and
/// `around.after` after it; only the words said within the turn (by their midpoints) are kept.
/// Also whether a segment straddled the turn's start.
fn with_context(
    engine: &WhisperEngine,
    model: &str,
    speech: &[f32],
    turn: &SpeechChunk,
    around: Around,
    prompt: Option<String>,
) -> (String, bool) {
    let from = turn.start.saturating_sub((around.before * RATE) as usize);
    let to = (turn.range().end + (around.after * RATE) as usize).min(speech.len());
    if from == turn.start && to == turn.range().end {
        let heard = hear(engine, model, &speech[from..to], false, prompt);
        return (heard.text.trim().to_string(), false);
    }
    let boundary = (turn.start - from) as f64 / RATE;
    let end = (turn.range().end - from) as f64 / RATE;
    let heard = hear(engine, model, &speech[from..to], true, prompt);
    let mut straddles = false;
    let kept: Vec<String> = heard
        .segments
        .iter()
        .flat_map(|s| {
            straddles |= s.start < boundary - 0.3 && s.end > boundary + 0.3;
            s.words.iter()
        })
        .filter(|w| (boundary..end).contains(&((w.start + w.end) / 2.0)))
        .map(|w| w.word.trim().to_string())
        .collect();
    (kept.join(" "), straddles)
}

/// The turn heard as live audio hears it ([`SaidBeforeChunks`]): the audio up to the end of
/// the pause that commits it taken, then heard with the turns before it in front, the decoder
/// made to read them as their kept texts (the engine returns only what comes after them).
fn hear_after_said(
    engine: &WhisperEngine,
    model: &str,
    speech: &[f32],
    said: &mut SaidBeforeChunks,
    taken: &mut usize,
    turn: &SpeechChunk,
    initial_prompt: Option<String>,
) -> String {
    let committed_at = (turn.range().end + (COMMIT_PAUSE * RATE) as usize).min(speech.len());
    if committed_at > *taken {
        said.hear(&speech[*taken..committed_at]);
        *taken = committed_at;
    }
    let (samples, said_before) = match said.before(turn) {
        Some((samples, before)) => (samples, Some(before)),
        None => (turn.samples.clone(), None),
    };
    let text = engine
        .transcribe(
            model,
            &EngineRequest {
                initial_prompt,
                said_before,
                ..EngineRequest::speech(
                    &samples,
                    std::iter::once(0..samples.len()).collect(),
                    LanguageChoice::Exact("en".into()),
                )
            },
        )
        .expect("the engine hears the audio")
        .text
        .trim()
        .to_string();
    said.committed(turn.range(), &text);
    text
}

/// The turn heard alone and with the text kept for the turn before as its prompt: the text of
/// the decode whose tokens are likelier (mean log-probability), alone when it ties.
fn surer(
    engine: &WhisperEngine,
    model: &str,
    samples: &[f32],
    previous: Option<&String>,
    show: bool,
) -> String {
    let alone = hear(engine, model, samples, false, None);
    let Some(previous) = previous.filter(|p| !p.trim().is_empty()) else {
        return alone.text.trim().to_string();
    };
    let prompted = hear(engine, model, samples, false, Some(previous.clone()));
    let score = |heard: &EngineOutput| avg_logprob(&heard.segments).unwrap_or(f64::NEG_INFINITY);
    let (a, p) = (score(&alone), score(&prompted));
    if show && alone.text.trim() != prompted.text.trim() {
        println!("    alone    {a:6.3} {}", alone.text.trim());
        println!("    prompted {p:6.3} {}", prompted.text.trim());
    }
    if p > a { prompted } else { alone }.text.trim().to_string()
}

/// The turn heard with the whole turns before it that start within `context` seconds of its
/// start in front; the words that repeat the texts kept for those turns (aligned word by word,
/// the fewest edits) are dropped, whatever their times. Also whether the alignment and the
/// words' times disagreed on where the turn starts (by more than one word).
#[allow(clippy::too_many_arguments)]
fn with_turns_before(
    engine: &WhisperEngine,
    model: &str,
    speech: &[f32],
    turns: &[SpeechChunk],
    texts: &[String],
    i: usize,
    context: f64,
    prompt: Option<String>,
) -> (String, bool) {
    let turn = &turns[i];
    let earliest = turn.start.saturating_sub((context * RATE) as usize);
    let first = (0..i)
        .rev()
        .take_while(|&j| turns[j].start >= earliest)
        .last()
        .unwrap_or(i);
    if first == i {
        return with_context(engine, model, speech, turn, Around::default(), prompt);
    }
    let from = turns[first].start;
    let boundary = (turn.start - from) as f64 / RATE;
    let heard = hear(engine, model, &speech[from..turn.range().end], true, prompt);
    let words: Vec<&verbatim::engine::Word> =
        heard.segments.iter().flat_map(|s| s.words.iter()).collect();
    let known: Vec<String> = texts[first..i]
        .iter()
        .flat_map(|t| t.split_whitespace())
        .map(compared)
        .filter(|w| !w.is_empty())
        .collect();
    let hypothesis: Vec<String> = words.iter().map(|w| compared(&w.word)).collect();
    let by_time = words
        .iter()
        .position(|w| (w.start + w.end) / 2.0 >= boundary)
        .unwrap_or(words.len());
    let by_text = aligned_prefix(&known, &hypothesis, by_time);
    let kept: Vec<String> = words[by_text..]
        .iter()
        .map(|w| w.word.trim().to_string())
        .collect();
    (kept.join(" "), by_text.abs_diff(by_time) > 1)
}

/// The turn heard with `prompt`; when that text says a phrase twice in a row, heard alone too,
/// and the text that does so less often kept (the prompted one when they tie).
fn fewer_repeats(
    engine: &WhisperEngine,
    model: &str,
    samples: &[f32],
    prompt: String,
    show: bool,
) -> String {
    let prompted = hear(engine, model, samples, false, Some(prompt)).text;
    let prompted = prompted.trim().to_string();
    let said_again = repeats(&prompted);
    if said_again == 0 {
        return prompted;
    }
    let alone = hear(engine, model, samples, false, None)
        .text
        .trim()
        .to_string();
    if show {
        println!("    prompted {prompted}\n    alone    {alone}");
    }
    if said_again > repeats(&alone) {
        alone
    } else {
        prompted
    }
}

/// How many times a phrase of 1 to 8 words follows itself at once ("try again try again").
fn repeats(text: &str) -> usize {
    let words: Vec<String> = text
        .split_whitespace()
        .map(compared)
        .filter(|w| !w.is_empty())
        .collect();
    (1..=8)
        .map(|n| {
            (0..words.len().saturating_sub(2 * n - 1))
                .filter(|&i| words[i..i + n] == words[i + n..i + 2 * n])
                .count()
        })
        .sum()
}

/// A word as compared: lower-case letters and digits.
fn compared(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// How many of `hypothesis`'s first words say `known` again: the prefix whose edit distance to
/// `known` is least (empty words cost nothing), the one nearest `near` among equals.
fn aligned_prefix(known: &[String], hypothesis: &[String], near: usize) -> usize {
    // row[j]: edits between the known words so far and hypothesis[..j].
    let mut row: Vec<usize> = (0..=hypothesis.len())
        .scan(0, |cost, j| {
            let here = *cost;
            if j < hypothesis.len() && !hypothesis[j].is_empty() {
                *cost += 1;
            }
            Some(here)
        })
        .collect();
    for (i, word) in known.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for j in 1..=hypothesis.len() {
            let above = row[j];
            let empty = hypothesis[j - 1].is_empty();
            let substitution = diagonal + usize::from(&hypothesis[j - 1] != word);
            let insertion = row[j - 1] + usize::from(!empty);
            row[j] = substitution.min(above + 1).min(insertion);
            diagonal = above;
        }
    }
    (0..=hypothesis.len())
        .min_by_key(|&j| (row[j], j.abs_diff(near)))
        .unwrap_or(0)
}

fn hear(
    engine: &WhisperEngine,
    model: &str,
    samples: &[f32],
    words: bool,
    initial_prompt: Option<String>,
) -> EngineOutput {
    engine
        .transcribe(
            model,
            &EngineRequest {
                initial_prompt,
                words,
                ..EngineRequest::speech(
                    samples,
                    std::iter::once(0..samples.len()).collect(),
                    LanguageChoice::Exact("en".into()),
                )
            },
        )
        .expect("the engine hears the audio")
}

fn report(name: &str, reference: &str, heard: &str, started: Instant, straddled: usize) {
    let (errors, words) = word_errors(&normalize_numbers(reference), &normalize_numbers(heard));
    println!(
        "{name:<22} WER {:5.1} % ({errors:>4} of {words:>4} words)  engine {:6.2} s  straddled {straddled}",
        100.0 * errors as f64 / words.max(1) as f64,
        started.elapsed().as_secs_f64()
    );
}

/// The list's recordings joined with `pause` seconds of silence (and around them), and their
/// reference texts joined.
fn joined(list: &Path, pause: f64) -> (Vec<f32>, String) {
    let silence = vec![0.0; (pause * RATE) as usize];
    let mut speech = silence.clone();
    let mut texts = Vec::new();
    let text = std::fs::read_to_string(list).expect("the list");
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let (path, reference) = line.split_once('\t').expect("path<TAB>text");
        let path = list.parent().unwrap_or(Path::new(".")).join(path);
        let decoded = decode::decode_file(&path, None).expect("a recording");
        speech.extend(decoded.samples);
        speech.extend_from_slice(&silence);
        texts.push(reference.trim().to_string());
    }
    (speech, texts.join(" "))
}
