//! `verbatim transcribe <file|->`: a path goes through the local-file route (no upload);
//! `-` or no argument uploads standard input (refused over 256 MiB before sending).

use std::io::Read;
use std::path::PathBuf;

use super::super::output::print_json;
use super::super::{CliError, Client, Globals};
use crate::wire::MAX_BODY_BYTES;
use crate::wire::transcription::{
    LocalFileRequest, ResponseFormat, TranscribeOptions, Transcription, TranscriptionSegment,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    #[value(name = "verbose_json")]
    VerboseJson,
    Text,
    Srt,
    Vtt,
}

#[derive(Debug, clap::Args)]
pub struct TranscribeArgs {
    /// Audio file, or `-` (the default) for standard input.
    pub input: Option<String>,
    /// Exact language code (omit to detect).
    #[arg(long, conflicts_with = "language_hint")]
    pub language: Option<String>,
    /// Shortlist for language detection (repeatable, in order of preference).
    #[arg(long)]
    pub language_hint: Vec<String>,
    /// `transcribe` (default) or `translate` (into English).
    #[arg(long)]
    pub task: Option<String>,
    /// Translate the transcript into this language (needs a translation provider).
    #[arg(long)]
    pub translate_to: Option<String>,
    /// Prompt for this request (joined with the dictionary's recognition terms).
    #[arg(long)]
    pub prompt: Option<String>,
    #[arg(long)]
    pub engine: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
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
}

pub fn run(globals: &Globals, args: TranscribeArgs) -> Result<(), CliError> {
    let client = Client::from_globals(globals)?;
    let query = if args.await_download {
        "?await_download=1"
    } else {
        ""
    };
    let result: Transcription = match args.input.as_deref() {
        None | Some("-") => {
            let audio = read_stdin()?;
            let mut headers = vec![("Content-Type", "application/octet-stream".to_string())];
            headers.extend(options(&args)?.headers());
            client.post_bytes(&format!("/v1/transcribe{query}"), &audio, &headers)?
        }
        Some(path) => {
            let path = absolute(path)?;
            let body = LocalFileRequest::new(path, &options(&args)?);
            client.send("POST", &format!("/v1/transcribe/local-file{query}"), &body)?
        }
    };
    if globals.json {
        print_json(&result);
        return Ok(());
    }
    match args.format {
        Format::Json | Format::VerboseJson => print_json(&result),
        Format::Text => println!("{}", result.text),
        Format::Srt => print!("{}", subtitles(segments(&result), false)),
        Format::Vtt => print!("{}", subtitles(segments(&result), true)),
    }
    Ok(())
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

/// The request's options, as the server reads them from either carrier. A `--task` the table
/// refuses is refused here, with the server's message.
fn options(args: &TranscribeArgs) -> Result<TranscribeOptions, CliError> {
    let wants_segments = matches!(args.format, Format::VerboseJson | Format::Srt | Format::Vtt);
    let mut options = TranscribeOptions {
        language: args.language.clone(),
        language_hints: args.language_hint.clone(),
        target_language: args.translate_to.clone(),
        response_format: if wants_segments {
            ResponseFormat::VerboseJson
        } else {
            ResponseFormat::Json
        },
        prompt: args.prompt.clone(),
        engine: args.engine.clone(),
        model: args.model.clone(),
        apply_corrections: args.no_corrections.then_some(false),
        vad: args.no_vad.then_some(false),
        ..TranscribeOptions::default()
    };
    if let Some(task) = &args.task {
        options
            .set_form_field("task", task)
            .map_err(|refused| CliError::Local(refused.0))?;
    }
    Ok(options)
}

/// Standard input, refused when empty or over the upload limit.
fn read_stdin() -> Result<Vec<u8>, CliError> {
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

fn segments(result: &Transcription) -> &[TranscriptionSegment] {
    result.segments.as_deref().unwrap_or_default()
}

/// SRT or WebVTT from the result's segments.
pub fn subtitles(segments: &[TranscriptionSegment], vtt: bool) -> String {
    let mut out = String::new();
    if vtt {
        out.push_str("WEBVTT\n\n");
    }
    for (index, segment) in segments.iter().enumerate() {
        let (start, end) = (segment.start, segment.end);
        let text = segment.text.trim();
        if !vtt {
            out.push_str(&format!("{}\n", index + 1));
        }
        out.push_str(&format!(
            "{} --> {}\n{text}\n\n",
            timestamp(start, vtt),
            timestamp(end, vtt)
        ));
    }
    out
}

fn timestamp(seconds: f64, vtt: bool) -> String {
    let millis = (seconds.max(0.0) * 1000.0).round() as u64;
    let (h, m, s, ms) = (
        millis / 3_600_000,
        millis / 60_000 % 60,
        millis / 1000 % 60,
        millis % 1000,
    );
    let separator = if vtt { '.' } else { ',' };
    format!("{h:02}:{m:02}:{s:02}{separator}{ms:03}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srt_and_vtt_are_rendered_from_segments() {
        let result: Vec<TranscriptionSegment> = serde_json::from_value(serde_json::json!([
            {"start": 0.0, "end": 1.5, "text": " Hello there."},
            {"start": 61.25, "end": 3725.001, "text": "Bye."}
        ]))
        .unwrap();
        assert_eq!(
            subtitles(&result, false),
            "1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n2\n00:01:01,250 --> 01:02:05,001\nBye.\n\n"
        );
        assert!(subtitles(&result, true).starts_with("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n"));
    }
}
