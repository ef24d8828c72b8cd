use std::process::ExitCode;

fn main() -> ExitCode {
    pantheon::cli::main()
}
