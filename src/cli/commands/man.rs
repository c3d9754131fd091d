//! `verbatim man [--out DIR]`: the manual page (roff) on standard output, or one page per
//! command and subcommand written into a folder (`verbatim.1`, `verbatim-transcribe.1`...).

use std::path::PathBuf;

use super::super::CliError;
use super::super::output::print_raw;

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write a page per command and subcommand into this folder (created if needed) and print
    /// their paths, instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Renders the pages of `command` (the whole `verbatim` command line).
pub fn run(args: ManArgs, command: clap::Command) -> Result<(), CliError> {
    let Some(dir) = args.out else {
        let mut page = Vec::new();
        page_of(command)
            .render(&mut page)
            .map_err(CliError::local)?;
        return print_raw(&page).map_err(CliError::local);
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::Local(format!("cannot create {}: {e}", dir.display())))?;
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_pages(command, &dir, &mut written).map_err(|e| {
        CliError::Local(format!(
            "cannot write the pages into {}: {e}",
            dir.display()
        ))
    })?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// The page of `command`, then those of its visible subcommands, depth first.
fn write_pages(
    command: clap::Command,
    dir: &std::path::Path,
    written: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    written.push(page_of(command).generate_to(dir)?);
    for sub in subcommands {
        write_pages(sub, dir, written)?;
    }
    Ok(())
}

/// The page of one command, titled in capitals as manual pages are (`VERBATIM-TRANSCRIBE`).
fn page_of(command: clap::Command) -> clap_mangen::Man {
    let title = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name())
        .to_uppercase();
    clap_mangen::Man::new(command)
        .title(title)
        .source(concat!("verbatim ", env!("CARGO_PKG_VERSION")))
}
