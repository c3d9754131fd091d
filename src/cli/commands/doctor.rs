//! `verbatim doctor`: runs every check of [`crate::doctor`] and prints each with its fix (or
//! the report as JSON). Exit code 0 when everything dictation needs is there (warnings
//! allowed), 1 when a check failed.

use super::super::output::print_json;
use super::super::{CliError, Globals};
use crate::doctor::{self, Context, Report, Status};

pub fn run(globals: &Globals) -> Result<(), CliError> {
    let context = Context::from_env(globals.dev, globals.port).map_err(CliError::local)?;
    let report = doctor::run(&context);
    if globals.json {
        print_json(&report);
    } else {
        print_report(&report);
    }
    let failed = count(&report, Status::Fail);
    if failed > 0 {
        return Err(CliError::Local(format!(
            "dictation is not ready: {failed} check{} failed",
            if failed == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

fn count(report: &Report, status: Status) -> usize {
    report
        .checks
        .iter()
        .filter(|check| check.status == status)
        .count()
}

fn print_report(report: &Report) {
    let width = report
        .checks
        .iter()
        .map(|check| check.name.len())
        .max()
        .unwrap_or(0);
    for check in &report.checks {
        let mark = match check.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        println!("{mark}  {:<width$}  {}", check.name, check.detail);
        if let Some(fix) = &check.fix {
            println!("      {:<width$}  fix: {fix}", "");
        }
    }
    let warnings = count(report, Status::Warn);
    let failed = count(report, Status::Fail);
    println!();
    if report.ready {
        println!(
            "Ready for dictation ({warnings} warning{}).",
            plural(warnings)
        );
    } else {
        println!(
            "Not ready for dictation: {failed} check{} failed, {warnings} warning{}.",
            plural(failed),
            plural(warnings)
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
