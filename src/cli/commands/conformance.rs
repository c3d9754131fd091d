//! `verbatim conformance`: runs the conformance kit against a server and prints (or writes)
//! its report. Exit 0 when no check failed, 4 when one did (3 stays "the server answered an
//! error" for the client commands), 2 when nothing answers, 1 for usage errors.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::super::{CliError, Globals};
use crate::conformance::report::Format;
use crate::conformance::{self, Area, Options, RunError};
use crate::discovery::{self, DataDir};

#[derive(Debug, clap::Args)]
pub struct ConformanceArgs {
    /// The server to check. Default: http://127.0.0.1:<port> (--port, else the discovery
    /// file, else 8978).
    #[arg(long)]
    pub url: Option<String>,
    /// The API token (default: --api-token / $VERBATIM_API_TOKEN, else the discovery file
    /// when it names the same port).
    #[arg(long, allow_hyphen_values = true)]
    pub token: Option<String>,
    /// The header that carries the token besides `Authorization: Bearer`.
    #[arg(long, value_name = "NAME", default_value = "X-Verbatim-API-Token")]
    pub token_header: String,
    /// Run only this area (repeatable).
    #[arg(long = "only", value_name = "AREA")]
    pub only: Vec<String>,
    /// Also run the checks that change data (dictionary, rules, history, import); each
    /// restores what it changed.
    #[arg(long)]
    pub allow_writes: bool,
    /// Also run the checks that start dictation or the Recorder.
    #[arg(long)]
    pub allow_audio: bool,
    /// The report's format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to this file (atomically) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The server's discovery file: check its rules (and take its token).
    #[arg(long, value_name = "FILE")]
    pub discovery: Option<PathBuf>,
    /// The server's Wyoming listener (`serve --wyoming`): check it too.
    #[arg(long, value_name = "HOST:PORT")]
    pub wyoming: Option<String>,
}

pub fn run(globals: &Globals, args: ConformanceArgs) -> Result<(), CliError> {
    let only = args
        .only
        .iter()
        .map(|name| {
            name.parse::<Area>().map_err(|_| {
                CliError::Local(format!(
                    "unknown area '{name}': use one of {}",
                    Area::names()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let published = DataDir::resolve(globals.dev)
        .ok()
        .and_then(|dir| discovery::read(&dir));
    let url = args.url.clone().unwrap_or_else(|| {
        let port = globals
            .port
            .or(published.as_ref().map(|d| d.port))
            .unwrap_or(8978);
        format!("http://127.0.0.1:{port}")
    });
    let published_token = published
        .filter(|d| {
            url.ends_with(&format!(":{}", d.port)) || url.ends_with(&format!(":{}/", d.port))
        })
        .map(|d| d.token);
    let token = args
        .token
        .clone()
        .or_else(|| globals.api_token.clone())
        .filter(|t| !t.is_empty())
        .or(published_token);
    let options = Options {
        url,
        token,
        token_header: args.token_header,
        only,
        allow_writes: args.allow_writes,
        allow_audio: args.allow_audio,
        discovery: args.discovery,
        wyoming: args.wyoming,
        progress: std::io::stderr().is_terminal(),
    };
    let report = conformance::run(&options).map_err(|err| match err {
        RunError::Usage(message) => CliError::Local(message),
        RunError::CannotConnect(message) => CliError::CannotConnect(message),
    })?;
    let rendered = report.render(args.format);
    match &args.output {
        Some(path) => crate::files::write_private_atomically(path, rendered.as_bytes())
            .map_err(|e| CliError::Local(format!("cannot write {}: {e}", path.display())))?,
        None => print!("{rendered}"),
    }
    if args.output.is_some() || args.format != Format::Text {
        eprintln!("{}", report.summary());
    }
    match report.counts().failed {
        0 => Ok(()),
        failed => Err(CliError::ChecksFailed(format!(
            "{failed} contract point{} failed",
            if failed == 1 { "" } else { "s" }
        ))),
    }
}
