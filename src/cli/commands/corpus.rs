//! `verbatim corpus record [--model ID] [--corpus DIR]`: runs every corpus clip through the real
//! engine and writes what it heard to `corpus/recordings/<model>.json`, which sim mode replays.

use std::path::PathBuf;
use std::sync::Arc;

use verbatim_sim::{Corpus, RecordedClip, Recording};

use super::super::progress::{count_bar, note};
use super::super::{CliError, Globals};
use crate::engine::Engine;
use crate::engine::catalog::find_model;
use crate::transcribe::{Audio, Caller, Job, Transcriber, TranscriberParts, Transcript};
use crate::wire::transcription::{ResponseFormat, TranscribeOptions};

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

/// The real engine's output for every clip of `corpus` with `model`, through the same
/// transcription path as the server's (with an empty dictionary and no post-processing).
pub fn record(globals: &Globals, corpus: &Corpus, model: &str) -> Result<Recording, CliError> {
    let spec = find_model(model)
        .ok_or_else(|| CliError::Local(super::model_selection::unknown_model(model)))?;
    let engine = real_engine(globals, spec.engine)?;
    let mut recording = Recording::new(engine.id(), spec.id);
    // A settings store of its own: nothing of the user's dictionary touches the recording.
    let settings = tempfile::tempdir().map_err(CliError::local)?;
    let store = crate::store::Store::open(&settings.path().join("corpus.sqlite3"))
        .map_err(CliError::local)?;
    let transcriber = Arc::new(Transcriber::new(TranscriberParts {
        engines: vec![engine.clone()],
        store: Arc::new(store),
        models: crate::app::model_dir(&data_dir(globals)?),
        slots: 1,
        max_waiting: 0,
    }));
    let options = TranscribeOptions {
        engine: Some(engine.id().into()),
        model: Some(spec.id.into()),
        response_format: ResponseFormat::VerboseJson,
        normalize_numbers: Some(false),
        apply_corrections: Some(false),
        ..TranscribeOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::local)?;
    let transcribe = |clip: &verbatim_sim::Clip| -> Result<Transcript, CliError> {
        let job = Job {
            audio: Audio::Samples(clip.samples.to_vec()),
            options: options.clone(),
            await_download: false,
            caller: Caller::Corpus,
        };
        runtime
            .block_on(transcriber.run(job))
            .map_err(|e| CliError::Local(format!("clip {}: {e}", clip.entry.id)))
    };
    // Load the model before timing anything: processing times are what sim mode replays as
    // latency, and the first clip's should not include the load.
    let bar = count_bar(
        corpus.clips().len() as u64,
        format!("Recording the corpus with {}", spec.id),
    );
    if let Some(first) = corpus.clips().first() {
        bar.set_message(format!("Loading {}", spec.id));
        transcribe(first)?;
        bar.set_message(format!("Recording the corpus with {}", spec.id));
    }
    for clip in corpus.clips() {
        let transcript = transcribe(clip)?;
        let processing_time = (transcript.stages.engine.as_secs_f64() * 1000.0).round() / 1000.0;
        note(&bar, &format!("{}: {}", clip.entry.id, transcript.raw_text));
        bar.inc(1);
        let segments = transcript.segments;
        recording.clips.insert(
            clip.entry.id.clone(),
            RecordedClip {
                duration: clip.samples.len() as f64 / verbatim_sim::SAMPLE_RATE as f64,
                language: transcript.language,
                processing_time,
                segments: segments
                    .into_iter()
                    .map(|s| verbatim_sim::Segment {
                        start: s.start,
                        end: s.end,
                        text: s.text,
                    })
                    .collect(),
                text: transcript.raw_text,
            },
        );
    }
    bar.finish_and_clear();
    Ok(recording)
}

fn data_dir(globals: &Globals) -> Result<crate::discovery::DataDir, CliError> {
    crate::discovery::DataDir::resolve(globals.dev).map_err(CliError::local)
}

/// The real engine `id` of this build, on the data folder's models.
fn real_engine(globals: &Globals, id: &str) -> Result<Arc<dyn Engine>, CliError> {
    let models = crate::app::model_dir(&data_dir(globals)?);
    crate::engine::registry::build(id, models).map_err(CliError::local)
}
