//! The `medulla` binary: parse the command line, run, print the error chain, exit 2.

use clap::Parser;

fn main() {
    let cli = medulla::cli::Cli::parse();
    match medulla::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("medulla: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            std::process::exit(2);
        }
    }
}
