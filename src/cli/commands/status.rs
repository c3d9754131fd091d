//! `verbatim status`: `Ready - <engine> (<model>)` or `No model loaded`.

use super::super::output::print_answer;
use super::super::{CliError, Client, Globals};
use crate::wire::Status;

pub fn run(globals: &Globals) -> Result<(), CliError> {
    let status: Status = Client::from_globals(globals)?.get("/v1/status")?;
    print_answer(globals.json, &status, |status| {
        match (status.status.as_str(), &status.engine) {
            ("ready", Some(engine)) => match &status.model {
                Some(model) => println!("Ready - {engine} ({model})"),
                None => println!("Ready - {engine}"),
            },
            _ => println!("No model loaded"),
        }
    });
    Ok(())
}
