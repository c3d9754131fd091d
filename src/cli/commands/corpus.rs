//! `verbatim corpus record [--model ID] [--corpus DIR]`: runs every corpus clip through the real
//! engine and writes what it heard to `corpus/recordings/<model>.json`, which sim mode replays.

use std::path::PathBuf;
use std::time::Instant;

use verbatim_sim::{Corpus, RecordedClip, Recording};

use super::super::{CliError, Globals};
use crate::engine::models::catalog::whisper_model;
use crate::engine::{Engine, EngineRequest, LanguageChoice, Task};

#[derive(Debug, clap::Subcommand)]
pub enum CorpusCommand {
    /// Record the real engine's output for every clip.
    Record {
        /// Model to record with.
        #[arg(long, default_value = "tiny.en")]
        model: String,
        /// Corpus folder (default: the one beside the source).
        #[arg(long)]
        corpus: Option<PathBuf>,
    },
}

pub fn run(globals: &Globals, command: CorpusCommand) -> Result<(), CliError> {
    let CorpusCommand::Record { model, corpus } = command;
    let corpus_dir = corpus.unwrap_or_else(Corpus::source_dir);
    let corpus = Corpus::load(&corpus_dir).map_err(CliError::local)?;
    let recording = record(globals, &corpus, &model)?;
    let path = recording
        .save(&corpus_dir.join("recordings"))
        .map_err(CliError::local)?;
    println!(
        "Recorded {} clips with {model} into {}",
        recording.clips.len(),
        path.display()
    );
    Ok(())
}

/// The real engine's output for every clip of `corpus` with `model`.
pub fn record(globals: &Globals, corpus: &Corpus, model: &str) -> Result<Recording, CliError> {
    let engine = whisper_engine(globals)?;
    let spec =
        whisper_model(model).ok_or_else(|| CliError::Local(format!("Unknown model '{model}'")))?;
    let mut recording = Recording::new(engine.id(), spec.id);
    let transcribe = |clip: &verbatim_sim::Clip| {
        engine
            .transcribe(
                spec.id,
                &EngineRequest {
                    samples: &clip.samples,
                    language: LanguageChoice::Auto,
                    task: Task::Transcribe,
                    initial_prompt: None,
                },
            )
            .map_err(|e| CliError::Local(format!("clip {}: {e}", clip.entry.id)))
    };
    // Load the model before timing anything: processing times are what sim mode replays as
    // latency, and the first clip's should not include the load.
    if let Some(first) = corpus.clips().first() {
        transcribe(first)?;
    }
    for clip in corpus.clips() {
        let started = Instant::now();
        let output = transcribe(clip)?;
        let processing_time = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        eprintln!("{}: {}", clip.entry.id, output.text);
        recording.clips.insert(
            clip.entry.id.clone(),
            RecordedClip {
                duration: clip.samples.len() as f64 / verbatim_sim::SAMPLE_RATE as f64,
                language: output.language,
                processing_time,
                segments: output.segments.into_iter().map(Into::into).collect(),
                text: output.text,
            },
        );
    }
    Ok(recording)
}

#[cfg(feature = "whisper")]
fn whisper_engine(globals: &Globals) -> Result<Box<dyn Engine>, CliError> {
    let dir = crate::discovery::DataDir::resolve(globals.dev).map_err(CliError::local)?;
    Ok(Box::new(crate::engine::whisper::WhisperEngine::new(
        crate::app::model_dir(&dir),
        0,
    )))
}

#[cfg(not(feature = "whisper"))]
fn whisper_engine(_: &Globals) -> Result<Box<dyn Engine>, CliError> {
    Err(CliError::local(crate::engine::EngineError::NotInBuild(
        "whisper",
    )))
}
