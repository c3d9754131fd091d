//! The conformance kit (`verbatim conformance`): the contract's observable points as checks
//! run over HTTP against any server. It is a client only: requests and expectations come from
//! `spec/contract.md`, never from the server's own types, so that it stays an honest judge.

mod audio;
mod checks;
mod context;
mod curl;
mod events;
mod expect;
pub mod http;
pub mod report;
mod runner;

pub use context::Ctx;
pub use runner::{Options, RunError, run};

/// The groups `--only` selects, in the order they run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    strum::EnumString,
    strum::Display,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "lowercase")]
pub enum Area {
    Wire,
    Errors,
    Status,
    Models,
    Auth,
    Security,
    Limits,
    Transcribe,
    Openai,
    Realtime,
    History,
    Dictionary,
    Rules,
    Backup,
    Dictation,
    Recorder,
    Discovery,
    Wyoming,
}

impl Area {
    /// Every area's name, comma-separated (for usage errors).
    pub fn names() -> String {
        use strum::IntoEnumIterator;
        Area::iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a check needs before it may run; without it the check is skipped, saying why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Calls protected routes: a token when the server requires one.
    pub access: bool,
    /// Changes data on the server (restored afterwards): `--allow-writes`.
    pub writes: bool,
    /// Starts dictation or the Recorder: `--allow-audio`.
    pub audio: bool,
    /// A server that requires a token, and the token.
    pub token: bool,
    /// `--discovery FILE`.
    pub discovery: bool,
    /// `--wyoming HOST:PORT`.
    pub wyoming: bool,
}

impl Needs {
    pub const NOTHING: Needs = Needs {
        access: false,
        writes: false,
        audio: false,
        token: false,
        discovery: false,
        wyoming: false,
    };
    pub const ACCESS: Needs = Needs {
        access: true,
        ..Needs::NOTHING
    };
    pub const WRITES: Needs = Needs {
        access: true,
        writes: true,
        ..Needs::NOTHING
    };
    pub const AUDIO: Needs = Needs {
        access: true,
        audio: true,
        ..Needs::NOTHING
    };
    pub const AUDIO_WRITES: Needs = Needs {
        access: true,
        audio: true,
        writes: true,
        ..Needs::NOTHING
    };
    pub const TOKEN: Needs = Needs {
        token: true,
        ..Needs::NOTHING
    };
    pub const DISCOVERY: Needs = Needs {
        discovery: true,
        ..Needs::NOTHING
    };
    pub const WYOMING: Needs = Needs {
        wyoming: true,
        ..Needs::NOTHING
    };
}

/// One contract point: where the contract says it, and how to observe it.
#[derive(Clone)]
pub struct Check {
    /// `area.short-name`, stable: reports and CI refer to it.
    pub id: &'static str,
    pub area: Area,
    /// The contract's section and a short quote of the line checked.
    pub section: &'static str,
    pub quote: &'static str,
    pub needs: Needs,
    pub run: fn(&mut Ctx) -> Step,
}

impl Check {
    pub fn new(
        id: &'static str,
        (section, quote): (&'static str, &'static str),
        needs: Needs,
        run: fn(&mut Ctx) -> Step,
    ) -> Check {
        let area = id
            .split('.')
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("check id {id} does not start with an area"));
        Check {
            id,
            area,
            section,
            quote,
            needs,
            run,
        }
    }
}

/// How a check ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Pass,
    Fail(Failure),
    Skip(String),
}

/// What the contract expects, what the server did, and how to see it again.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub expected: String,
    pub observed: String,
    /// The request to reproduce it; None where no single request does.
    pub curl: Option<String>,
}

/// A check's result: `Err` carries a failure or a skip, so checks use `?`.
pub type Step<T = ()> = Result<T, Outcome>;

/// A skip with its reason.
pub fn skip<T>(why: impl Into<String>) -> Step<T> {
    Err(Outcome::Skip(why.into()))
}

/// A failure that no single request reproduces.
pub fn fail<T>(expected: impl Into<String>, observed: impl Into<String>) -> Step<T> {
    Err(Outcome::Fail(Failure {
        expected: expected.into(),
        observed: observed.into(),
        curl: None,
    }))
}

/// Every check of the kit, in running order.
pub fn all_checks() -> Vec<Check> {
    checks::all()
}
