//! The `verbatim` binary: parses the command line and hands over to `cli::run`.

fn main() -> std::process::ExitCode {
    verbatim::cli::main()
}
