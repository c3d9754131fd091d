//! `verbatim completions bash|zsh|fish|elvish|powershell`: the shell's completion script for
//! every command and option, on standard output.

use clap_complete::Shell;

use super::super::CliError;
use super::super::output::print_raw;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script of `command` (the whole `verbatim` command line).
pub fn run(args: CompletionsArgs, mut command: clap::Command) -> Result<(), CliError> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    print_raw(&script).map_err(CliError::local)
}
