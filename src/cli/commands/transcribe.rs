//! `verbatim transcribe <file|->`: a path goes through the local-file route (no upload);
//! `-` or no argument uploads standard input (refused over 256 MiB before sending). The answer
//! is streamed: with progress (a terminal, or `--progress`) each segment is shown on standard
//! error as it is decoded; the result goes to standard output in the chosen format. Ctrl-C
//! prints what was transcribed so far, marked partial, and exits 130.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::super::client::status_of_code;
use super::super::interrupt::on_interrupt;
use super::super::output::print_json;
use super::super::progress::{TranscriptionBar, segment_line, stderr_is_terminal};
use super::super::{CliError, Client, Globals};
use crate::audio::decode::declared_duration;
use crate::engine::Task;
use crate::wire::subtitles;
use crate::wire::transcription::{
    Granularity, LocalFileRequest, ResponseFormat, TranscribeOptions, Transcription,
    TranscriptionSegment,
};
use crate::wire::{ErrorBody, MAX_BODY_BYTES};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    #[value(name = "verbose_json")]
    VerboseJson,
    #[value(alias = "txt")]
    Text,
    Srt,
    Vtt,
}

/// The `--task` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskArg {
    /// Write down what is said, in the language it is said in.
    Transcribe,
    /// Translate the speech into English (multilingual models only).
    Translate,
}

/// The `--engine` values: the engines of this build's registry, each with what it is.
fn engine_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::engine::registry::ENGINES
            .iter()
            .map(|kind| clap::builder::PossibleValue::new(kind.id).help(kind.about)),
    )
}

#[derive(Debug, clap::Args)]
pub struct TranscribeArgs {
    /// Audio file, or `-` (the default) for standard input.
    pub input: Option<String>,
    /// Language code (omit, or `auto`, to detect; a region tag such as `en-US` means its language).
    #[arg(long, conflicts_with = "language_hint")]
    pub language: Option<String>,
    /// Shortlist for language detection (repeatable, in order of preference).
    #[arg(long)]
    pub language_hint: Vec<String>,
    /// What to do with the speech (default: transcribe).
    #[arg(long, value_enum)]
    pub task: Option<TaskArg>,
    /// Translate the transcript into this language (needs a translation provider).
    #[arg(long)]
    pub translate_to: Option<String>,
    /// Prompt for this request (joined with the dictionary's recognition terms).
    #[arg(long)]
    pub prompt: Option<String>,
    /// Engine to transcribe with (default: the selected one).
    #[arg(long, value_parser = engine_values())]
    pub engine: Option<String>,
    /// Model to transcribe with, e.g. `tiny.en` or `base` (default: the selected one; see
    /// `verbatim models`).
    #[arg(long)]
    pub model: Option<String>,
    /// Run this prompt action (its name or id, see `verbatim actions`) on the transcript and
    /// print its output; when the chat provider fails, the transcript is printed and why on
    /// standard error.
    #[arg(long, value_name = "NAME")]
    pub action: Option<String>,
    /// Wait for the model's weights instead of failing when they are missing.
    #[arg(long)]
    pub await_download: bool,
    /// Return the engine's text without dictionary corrections.
    #[arg(long)]
    pub no_corrections: bool,
    /// Transcribe everything, not only the speech voice activity detection finds.
    #[arg(long)]
    pub no_vad: bool,
    /// Output format (srt and vtt are rendered from the segments).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// With `--format verbose_json`: time every word (`words`).
    #[arg(long)]
    pub words: bool,
    /// Show each segment on standard error as it is decoded, with where it starts (the
    /// default when standard error is a terminal).
    #[arg(long, conflicts_with = "no_progress")]
    pub progress: bool,
    /// Show nothing until the transcription is done.
    #[arg(long)]
    pub no_progress: bool,
}

pub fn run(globals: &Globals, args: TranscribeArgs) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    let query = if args.await_download {
        "?await_download=1"
    } else {
        ""
    };
    let progress = args.progress || (!args.no_progress && stderr_is_terminal());
    let mut options = options(&args);
    // Always streamed: Ctrl-C then has the segments heard so far to print.
    options.stream = Some(true);
    // On a terminal the segments move a bar (over the file's declared length, else a spinner).
    let bar = |duration: Option<f64>| {
        (progress && stderr_is_terminal()).then(|| TranscriptionBar::new(duration))
    };
    let heard = Heard::default();
    let format = if globals.json {
        Format::Json
    } else {
        args.format
    };
    on_interrupt({
        let heard = heard.clone();
        move || heard.print_partial(format)
    });
    let mut answer = Answer {
        result: None,
        bar: None,
        progress,
        heard,
    };
    match args.input.as_deref() {
        None | Some("-") => {
            let audio = read_stdin()?;
            let mut headers = vec![("Content-Type", "application/octet-stream".to_string())];
            headers.extend(options.headers());
            let path = format!("/v1/transcribe{query}");
            answer.show(bar(None));
            client.post_bytes_for_events(&path, &audio, &headers, |n, d| answer.take(n, d))?;
        }
        Some(path) => {
            let path = absolute(path)?;
            answer.show(bar(declared_duration(std::path::Path::new(&path))));
            let body = LocalFileRequest::new(path, &options);
            let path = format!("/v1/transcribe/local-file{query}");
            client.post_for_events(&path, &body, |n, d| answer.take(n, d))?;
        }
    };
    drop(answer.bar.take());
    let result = answer.result.ok_or_else(|| {
        CliError::local("the server's events ended before the transcription was done")
    })?;
    if globals.json {
        print_json(&result);
        return Ok(());
    }
    print_result(&result, args.format);
    if let Some(why) = &result.prompt_action_error {
        eprintln!("The text is as transcribed: {why}");
    }
    Ok(())
}

/// `result` on standard output in `format`.
fn print_result(result: &Transcription, format: Format) {
    let segments = result.segments.as_deref().unwrap_or_default();
    match format {
        Format::Json | Format::VerboseJson => print_json(result),
        Format::Text => println!("{}", result.text),
        Format::Srt => print!("{}", subtitles::srt(segments)),
        Format::Vtt => print!("{}", subtitles::vtt(segments)),
    }
}

/// The segments decoded so far, shared with the Ctrl-C thread, and the bar to clear then.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<HeardSoFar>>);

#[derive(Default)]
struct HeardSoFar {
    segments: Vec<TranscriptionSegment>,
    bar: Option<indicatif::ProgressBar>,
    /// The whole result has been printed or is being: nothing partial to add.
    done: bool,
}

impl Heard {
    fn lock(&self) -> std::sync::MutexGuard<'_, HeardSoFar> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Ctrl-C: the text of the segments so far on standard output in `format` (JSON with
    /// `"partial": true`), and on standard error that it is partial.
    fn print_partial(&self, format: Format) {
        let mut heard = self.lock();
        if let Some(bar) = heard.bar.take() {
            bar.finish_and_clear();
        }
        if heard.done {
            return;
        }
        let segments = std::mem::take(&mut heard.segments);
        let text = segments
            .iter()
            .map(|s| s.text.trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let until = segments.last().map_or(0.0, |s| s.end);
        match format {
            Format::Json | Format::VerboseJson => print_json(&serde_json::json!({
                "text": text, "segments": segments, "partial": true,
            })),
            Format::Text if !text.is_empty() => println!("{text}"),
            Format::Text => {}
            Format::Srt => print!("{}", subtitles::srt(&segments)),
            Format::Vtt => print!("{}", subtitles::vtt(&segments)),
        }
        eprintln!(
            "Interrupted: partial transcript, {} segment{} up to {}.",
            segments.len(),
            if segments.len() == 1 { "" } else { "s" },
            subtitles::timestamp(until, '.')
        );
    }
}

/// A streamed answer as it arrives: each segment kept, and shown on standard error with
/// progress (a line, or a line above the bar), then the result.
struct Answer {
    result: Option<Transcription>,
    bar: Option<TranscriptionBar>,
    progress: bool,
    heard: Heard,
}

impl Answer {
    /// Shows `bar` (if any) while the answer comes.
    fn show(&mut self, bar: Option<TranscriptionBar>) {
        self.heard.lock().bar = bar.as_ref().map(TranscriptionBar::handle);
        self.bar = bar;
    }

    fn take(&mut self, event: &str, data: &str) -> Result<(), CliError> {
        let unreadable = |e: serde_json::Error| {
            CliError::local(format!("the server's '{event}' event is not readable: {e}"))
        };
        match event {
            "segment" => {
                let segment: TranscriptionSegment =
                    serde_json::from_str(data).map_err(unreadable)?;
                // Kept before it is shown: a Ctrl-C right after its line prints it too.
                self.heard.lock().segments.push(segment.clone());
                match &self.bar {
                    Some(bar) => bar.segment(&segment),
                    None if self.progress => eprintln!("{}", segment_line(&segment)),
                    None => {}
                }
            }
            "done" => {
                self.result = Some(serde_json::from_str(data).map_err(unreadable)?);
                self.heard.lock().done = true;
            }
            "error" => {
                let body: ErrorBody = serde_json::from_str(data).map_err(unreadable)?;
                return Err(CliError::Server {
                    status: status_of_code(&body.error.code),
                    code: body.error.code,
                    message: body.error.message,
                });
            }
            _ => {}
        }
        Ok(())
    }
}

fn absolute(path: &str) -> Result<String, CliError> {
    let path = PathBuf::from(path);
    let path = if path.is_absolute() {
        path
    } else {
        std::env::current_dir().map_err(CliError::local)?.join(path)
    };
    if !path.is_file() {
        return Err(CliError::Local(format!(
            "File not found: {}",
            path.display()
        )));
    }
    Ok(path.to_string_lossy().into_owned())
}

/// The request's options, as the server reads them from either carrier.
fn options(args: &TranscribeArgs) -> TranscribeOptions {
    let wants_segments = matches!(args.format, Format::VerboseJson | Format::Srt | Format::Vtt);
    TranscribeOptions {
        task: args.task.map(|task| match task {
            TaskArg::Transcribe => Task::Transcribe,
            TaskArg::Translate => Task::Translate,
        }),
        language: args.language.clone(),
        language_hints: args.language_hint.clone(),
        target_language: args.translate_to.clone(),
        response_format: if wants_segments {
            ResponseFormat::VerboseJson
        } else {
            ResponseFormat::Json
        },
        prompt: args.prompt.clone(),
        prompt_action: args.action.clone(),
        engine: args.engine.clone(),
        model: args.model.clone(),
        apply_corrections: args.no_corrections.then_some(false),
        vad: args.no_vad.then_some(false),
        timestamp_granularities: if args.words {
            vec![Granularity::Segment, Granularity::Word]
        } else {
            Vec::new()
        },
        ..TranscribeOptions::default()
    }
}

/// Standard input, refused when empty or over the upload limit. A terminal is not read (the
/// command would wait silently for audio nobody types): the usage is the answer.
fn read_stdin() -> Result<Vec<u8>, CliError> {
    if std::io::stdin().is_terminal() {
        return Err(CliError::Local(
            "No audio file given. Usage: verbatim transcribe FILE (or pipe audio in: `verbatim transcribe - < FILE`); `verbatim transcribe --help` lists the options".into(),
        ));
    }
    let mut audio = Vec::new();
    std::io::stdin()
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut audio)
        .map_err(|e| CliError::Local(format!("cannot read standard input: {e}")))?;
    if audio.is_empty() {
        return Err(CliError::Local("No audio on standard input".into()));
    }
    if audio.len() as u64 > MAX_BODY_BYTES {
        return Err(CliError::Local(
            "Standard input is larger than the 256 MiB upload limit".into(),
        ));
    }
    Ok(audio)
}
