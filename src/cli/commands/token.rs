//! `verbatim token show|rotate`: the API token kept in the local store.

use crate::discovery::{self, DataDir};

use super::super::{CliError, Globals};
use super::local_store::open_store;

#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Print the current token.
    Show,
    /// Replace the token; a running server and its discovery file switch to the new one.
    Rotate,
}

pub fn run(globals: &Globals, command: TokenCommand) -> Result<(), CliError> {
    let store = open_store(globals)?;
    let token = match command {
        TokenCommand::Show => discovery::token(&store).map_err(CliError::local)?,
        TokenCommand::Rotate => {
            let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
            discovery::rotate_token(&dir, &store).map_err(CliError::local)?
        }
    };
    if globals.json {
        println!("{}", serde_json::json!({ "token": token }));
    } else {
        println!("{token}");
    }
    Ok(())
}
