//! The store of the local data folder (`--dev` picks the development one), for the commands that
//! read or change it directly, as `config` does, rather than through a running server.

use super::super::{CliError, Globals};
use crate::discovery::DataDir;
use crate::store::Store;

/// Opens the store of the data folder `globals` point at.
pub(super) fn open_store(globals: &Globals) -> Result<Store, CliError> {
    let dir = DataDir::resolve(globals.dev).map_err(CliError::local)?;
    dir.open_store().map_err(CliError::local)
}
