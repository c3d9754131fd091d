//! The `verbatim` command line: `serve` runs the application, the other commands are
//! clients of its API (or, for `config` and `token`, act on the local data folder).

mod advice;
mod client;
mod commands;
mod interrupt;
mod output;
mod progress;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub use client::Client;

/// Exit codes of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    /// Usage or local error (file not found, empty stdin...).
    Local = 1,
    /// Nothing answered at the server's address.
    CannotConnect = 2,
    /// The server answered with an Error object.
    ServerError = 3,
    /// `conformance`: at least one check failed.
    ChecksFailed = 4,
}

/// A failed command: what to print on stderr and how to exit.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Local(String),
    #[error("{0}")]
    CannotConnect(String),
    #[error("Server returned {status} - {message}")]
    Server {
        status: u16,
        /// The Error object's `code`.
        code: String,
        message: String,
    },
    /// A dictation or Recorder session the server reports as failed.
    #[error("{0}")]
    SessionFailed(String),
    /// `conformance`: the server broke at least one contract point.
    #[error("{0}")]
    ChecksFailed(String),
    /// The server's state refuses what was asked, as read before asking (exit 3, as the
    /// server's 409 would be).
    #[error("{0}")]
    Refused(String),
}

impl CliError {
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Local(_) => Exit::Local,
            CliError::CannotConnect(_) => Exit::CannotConnect,
            CliError::Server { .. } | CliError::SessionFailed(_) | CliError::Refused(_) => {
                Exit::ServerError
            }
            CliError::ChecksFailed(_) => Exit::ChecksFailed,
        }
    }

    pub fn local(err: impl std::fmt::Display) -> CliError {
        CliError::Local(err.to_string())
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "verbatim",
    version,
    about = "Local speech-to-text service and its command-line client"
)]
pub struct Cli {
    #[command(flatten)]
    pub globals: Globals,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Globals {
    /// Server port (serve: the port to listen on; clients: the port to call). Default: the
    /// discovery file, else the apiServerPort preference (8978).
    #[arg(long, global = true)]
    pub port: Option<u16>,
    /// API token (default: $VERBATIM_API_TOKEN, else the discovery file).
    #[arg(
        long,
        global = true,
        env = "VERBATIM_API_TOKEN",
        hide_env_values = true,
        // A token may start with `-` (base64url): it is the value, not another option.
        allow_hyphen_values = true
    )]
    pub api_token: Option<String>,
    /// Print machine-readable JSON (keys sorted) instead of text for people.
    #[arg(long, global = true)]
    pub json: bool,
    /// Use the development data folder (verbatim-dev) instead of the default one.
    #[arg(long, global = true)]
    pub dev: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the application with its API server on 127.0.0.1.
    Serve(commands::serve::ServeArgs),
    /// Show whether the selected model can transcribe.
    Status,
    /// Transcribe an audio file (or standard input).
    Transcribe(commands::transcribe::TranscribeArgs),
    /// List, select, import and remove models.
    Models {
        #[command(subcommand)]
        command: Option<commands::models::ModelsCommand>,
    },
    /// List or delete transcription history.
    #[command(args_conflicts_with_subcommands = true)]
    History {
        #[command(subcommand)]
        command: Option<commands::history::HistoryCommand>,
        #[command(flatten)]
        list: commands::history::ListArgs,
    },
    /// Manage recognition terms and corrections.
    #[command(subcommand)]
    Dictionary(commands::dictionary::DictionaryCommand),
    /// List workflow rules or switch one on or off.
    Rules {
        #[command(subcommand)]
        command: Option<commands::rules::RulesCommand>,
    },
    /// Start and stop dictation, and read a session's text.
    #[command(subcommand)]
    Dictation(commands::dictation::DictationCommand),
    /// Start and stop the Recorder, and read a session's file and text.
    #[command(subcommand)]
    Recorder(commands::recorder::RecorderCommand),
    /// Stream the microphone (or a file, at real time) to the server and print the text as it comes.
    Listen(commands::listen::ListenArgs),
    /// Open Verbatim's page in the browser, signed in by a one-time link.
    Open(commands::open::OpenArgs),
    /// Write a settings backup (workflows, dictionary, history...) to a file, atomically.
    Export {
        /// The backup file to write (`~` is expanded).
        path: std::path::PathBuf,
    },
    /// Import a settings backup file: merged, nothing is overwritten.
    Import {
        /// The backup file to read (relative, absolute or `~/...`).
        path: std::path::PathBuf,
    },
    /// Read or change preferences in the local data folder.
    #[command(subcommand)]
    Config(commands::config::ConfigCommand),
    /// List or delete snippets (from settings backups) in the local data folder.
    Snippets {
        #[command(subcommand)]
        command: Option<commands::local_data::LocalDataCommand>,
    },
    /// List or delete profiles (from settings backups) in the local data folder.
    Profiles {
        #[command(subcommand)]
        command: Option<commands::local_data::LocalDataCommand>,
    },
    /// List, add, remove or run prompt actions (run through the chat provider).
    Actions {
        #[command(subcommand)]
        command: Option<commands::actions::ActionsCommand>,
    },
    /// List or delete prompt actions (from settings backups) in the local data folder.
    PromptActions {
        #[command(subcommand)]
        command: Option<commands::local_data::LocalDataCommand>,
    },
    /// Record the real engine's output on the corpus (what sim mode replays).
    #[command(subcommand)]
    Corpus(commands::corpus::CorpusCommand),
    /// Check a server against the API contract (any implementation, over HTTP).
    Conformance(commands::conformance::ConformanceArgs),
    /// Show or rotate the API token.
    #[command(subcommand)]
    Token(commands::token::TokenCommand),
    /// Check what dictation needs on this machine and explain how to fix each problem.
    Doctor,
    /// Run the server in the background as a systemd user service.
    #[command(subcommand)]
    Service(commands::service::ServiceCommand),
    /// Print the shell completion script for `verbatim`.
    Completions(commands::completions::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command into a folder.
    Man(commands::man::ManArgs),
}

/// Entry point of the binary: parse, run, map to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(Exit::Local as u8),
            };
        }
    };
    #[cfg(feature = "capture")]
    crate::audio::capture::cpal::alsa_messages::route_to_log();
    if closed_output_ends_the_command(&cli.command) {
        end_quietly_when_output_closes();
    }
    let asked = advice::Asked {
        model: match &cli.command {
            Command::Transcribe(args) => args.model.clone(),
            _ => None,
        },
    };
    let globals = cli.globals.clone();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let client = matches!(err, CliError::Server { .. })
                .then(|| Client::from_globals(&globals).ok())
                .flatten();
            advice::report(&err, globals.json, client.as_ref(), &asked);
            ExitCode::from(err.exit() as u8)
        }
    }
}

/// Whether a reader that goes away (`verbatim history | head -1`) simply ends `command`: every
/// command that only prints. `serve`, `conformance` and `corpus` run servers and engines of
/// their own, whose sockets and pipes must see the error instead.
fn closed_output_ends_the_command(command: &Command) -> bool {
    !matches!(
        command,
        Command::Serve(_) | Command::Conformance(_) | Command::Corpus(_)
    )
}

/// Restores the default action of SIGPIPE, which Rust programs start with ignored: writing to
/// a closed pipe then ends the process quietly, as it does `ls | head`, instead of failing the
/// next `println!` with a panic. Sockets are unaffected (the HTTP client sends with
/// `MSG_NOSIGNAL`).
fn end_quietly_when_output_closes() {
    // SAFETY: setting a signal's disposition to its default has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let globals = &cli.globals;
    match cli.command {
        Command::Serve(args) => commands::serve::run(globals, args),
        Command::Status => commands::status::run(globals),
        Command::Transcribe(args) => commands::transcribe::run(globals, args),
        Command::Models { command } => commands::models::run(globals, command),
        Command::History { command, list } => commands::history::run(globals, command, list),
        Command::Dictionary(cmd) => commands::dictionary::run(globals, cmd),
        Command::Rules { command } => commands::rules::run(globals, command),
        Command::Dictation(cmd) => commands::dictation::run(globals, cmd),
        Command::Recorder(cmd) => commands::recorder::run(globals, cmd),
        Command::Listen(args) => commands::listen::run(globals, args),
        Command::Open(args) => commands::open::run(globals, args),
        Command::Export { path } => commands::backup::export(globals, &path),
        Command::Import { path } => commands::backup::import(globals, &path),
        Command::Config(cmd) => commands::config::run(globals, cmd),
        Command::Snippets { command } => {
            commands::local_data::run(globals, commands::local_data::Kind::Snippets, command)
        }
        Command::Profiles { command } => {
            commands::local_data::run(globals, commands::local_data::Kind::Profiles, command)
        }
        Command::Actions { command } => commands::actions::run(globals, command),
        Command::PromptActions { command } => {
            commands::local_data::run(globals, commands::local_data::Kind::PromptActions, command)
        }
        Command::Corpus(cmd) => commands::corpus::run(globals, cmd),
        Command::Token(cmd) => commands::token::run(globals, cmd),
        Command::Conformance(args) => commands::conformance::run(globals, args),
        Command::Doctor => commands::doctor::run(globals),
        Command::Service(cmd) => commands::service::run(globals, cmd),
        Command::Completions(args) => commands::completions::run(args, Cli::command()),
        Command::Man(args) => commands::man::run(args, Cli::command()),
    }
}
