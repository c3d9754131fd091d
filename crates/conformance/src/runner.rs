//! Runs the selected checks in order against one server: finds out whether it requires a
//! token, skips what the run may not do (saying why), times each check, shows progress.

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::Instant;

use super::http::{self, Request, Target};
use super::report::{CheckResult, Report};
use super::{Area, Check, Ctx, Failure, Outcome};

/// What to run, against what.
#[derive(Debug, Clone)]
pub struct Options {
    /// `http://host:port` of the server.
    pub url: String,
    pub token: Option<String>,
    /// The header that carries the token besides `Authorization: Bearer`.
    pub token_header: String,
    /// Areas to run; empty: all.
    pub only: Vec<Area>,
    pub allow_writes: bool,
    pub allow_audio: bool,
    /// The server's discovery file: its rules are checked, and its token used when none is given.
    pub discovery: Option<PathBuf>,
    /// `HOST:PORT` of the server's Wyoming listener: its checks run.
    pub wyoming: Option<String>,
    /// A progress line on stderr.
    pub progress: bool,
}

/// Why no check ran.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    CannotConnect(String),
}

/// Runs every check `options` selects and returns the report.
pub fn run(options: &Options) -> Result<Report, RunError> {
    let target = Target::parse(&options.url).map_err(RunError::Usage)?;
    let probe = http::send(&target, &Request::new("GET", "/v1/status"))
        .map_err(|e| RunError::CannotConnect(format!("{}: {e}", target.base_url())))?;
    let token = options.token.clone().or_else(|| {
        let text = std::fs::read_to_string(options.discovery.as_ref()?).ok()?;
        let file: serde_json::Value = serde_json::from_str(&text).ok()?;
        file["token"].as_str().map(str::to_string)
    });
    let mut cx = Ctx::new(target.clone(), token, options.token_header.clone());
    cx.allow_writes = options.allow_writes;
    cx.allow_audio = options.allow_audio;
    cx.discovery = options.discovery.clone();
    cx.wyoming = options.wyoming.clone();
    cx.auth_required = probe.status == 200
        && http::send(&target, &Request::new("GET", "/v1/models"))
            .is_ok_and(|answer| answer.status == 401);

    let checks: Vec<Check> = super::all_checks()
        .into_iter()
        .filter(|c| options.only.is_empty() || options.only.contains(&c.area))
        .collect();
    let started = Instant::now();
    let mut results = Vec::with_capacity(checks.len());
    for (done, check) in checks.iter().enumerate() {
        if options.progress {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K[{}/{}] {}", done + 1, checks.len(), check.id);
            let _ = err.flush();
        }
        let began = Instant::now();
        cx.no_capture = None;
        let outcome = match why_skipped(check, &cx) {
            Some(why) => Outcome::Skip(why),
            None => {
                let outcome = run_one(check, &mut cx);
                lacking_capture(check, &cx, outcome)
            }
        };
        results.push(CheckResult {
            id: check.id,
            area: check.area,
            section: check.section,
            quote: check.quote,
            outcome,
            seconds: began.elapsed().as_secs_f64(),
        });
    }
    if options.progress {
        eprint!("\r\x1b[2K");
    }
    Ok(Report {
        target: target.base_url(),
        results,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn run_one(check: &Check, cx: &mut Ctx) -> Outcome {
    match std::panic::catch_unwind(AssertUnwindSafe(|| (check.run)(cx))) {
        Ok(Ok(())) => Outcome::Pass,
        Ok(Err(outcome)) => outcome,
        Err(panic) => Outcome::Fail(Failure {
            expected: "the check to run to its end".into(),
            observed: format!(
                "the check stopped: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("panic")
            ),
            curl: None,
        }),
    }
}

/// A check that starts capture and failed where the server said it has no such device (409 `No
/// microphone available`) is skipped with that reason: the server is right, the machine lacks
/// what the check needs.
fn lacking_capture(check: &Check, cx: &Ctx, outcome: Outcome) -> Outcome {
    match (&outcome, &cx.no_capture) {
        (Outcome::Fail(_), Some(message)) if check.needs.audio => Outcome::Skip(format!(
            "this machine has no capture device for it: the server answered 409 `{message}`"
        )),
        _ => outcome,
    }
}

fn why_skipped(check: &Check, cx: &Ctx) -> Option<String> {
    let needs = check.needs;
    if needs.writes && !cx.allow_writes {
        return Some("changes data on the server (then restores it): pass --allow-writes".into());
    }
    if needs.audio && !cx.allow_audio {
        return Some("starts dictation or the Recorder: pass --allow-audio".into());
    }
    if needs.access && cx.auth_required && cx.token.is_none() {
        return Some("the server requires a token: pass --token or --discovery".into());
    }
    if needs.token && !cx.auth_required {
        return Some(
            "the server does not require a token (apiServerRequiresAuthentication is off)".into(),
        );
    }
    if needs.token && cx.token.is_none() {
        return Some("the server requires a token: pass --token or --discovery".into());
    }
    if needs.discovery && cx.discovery.is_none() {
        return Some("checks the discovery file: pass --discovery FILE".into());
    }
    if needs.wyoming && cx.wyoming.is_none() {
        return Some("checks the Wyoming listener: pass --wyoming HOST:PORT".into());
    }
    None
}
