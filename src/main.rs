//! The `medulla` binary: parse the command line, run, print the error chain, exit 2.

use clap::Parser;

/// mimalloc rather than the system allocator: the owner allocates and frees from many
/// threads at once (actors, the embedding's threads, a store's writer and its fold), where
/// glibc's malloc spent ~a quarter of an import's writer thread (docs/BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
