//! `verbatim status`: `Ready - <engine> (<model>)` or `No model loaded`.

use super::super::output::print_json;
use super::super::{CliError, Client, Globals};

pub fn run(globals: &Globals) -> Result<(), CliError> {
    let status = Client::from_globals(globals)?.get("/v1/status")?;
    if globals.json {
        print_json(&status);
        return Ok(());
    }
    let field = |name: &str| status.get(name).and_then(|v| v.as_str());
    match (field("status"), field("engine")) {
        (Some("ready"), Some(engine)) => match field("model") {
            Some(model) => println!("Ready - {engine} ({model})"),
            None => println!("Ready - {engine}"),
        },
        _ => println!("No model loaded"),
    }
    Ok(())
}
