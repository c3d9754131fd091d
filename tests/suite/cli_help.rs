//! The command-line definition itself: clap's own consistency checks, and help text on every
//! option, argument and subcommand (so `--help`, the man page and completions explain them all).

use clap::CommandFactory;
use verbatim::cli::Cli;

#[test]
fn the_command_line_passes_claps_debug_checks() {
    Cli::command().debug_assert();
}

/// Walks the whole command tree; every argument but the built-in help and version flags, and
/// every subcommand, must say what it is for.
#[test]
fn every_option_argument_and_subcommand_has_help() {
    fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} <{id}>"));
            }
        }
        for sub in command.get_subcommands() {
            let sub_path = format!("{path} {}", sub.get_name());
            if sub.get_about().is_none() && sub.get_long_about().is_none() {
                missing.push(sub_path.clone());
            }
            walk(sub, &sub_path, missing);
        }
    }
    let mut command = Cli::command();
    command.build();
    let mut missing = Vec::new();
    walk(&command, "verbatim", &mut missing);
    assert!(missing.is_empty(), "without help: {missing:#?}");
}
