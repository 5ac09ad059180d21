//! Project automation for logfmt, following the cargo-xtask pattern
//! (<https://github.com/matklad/cargo-xtask>).
//!
//! Run `cargo xtask help` (the alias lives in `.cargo/config.toml`).
//! The available subcommands are the entries of [`tasks::TASKS`]; `ci` runs
//! the steps listed in [`tasks::CI_STEPS`], in order.
#![allow(missing_docs)]

mod api_count;
mod apt;
mod bench;
mod bench_baseline;
mod bench_decode;
mod bench_defmt;
mod bench_durable;
mod bench_first_line;
mod bench_load;
mod bench_scan;
mod bench_threads;
mod bench_wal;
mod bench_zstd;
mod cmd;
mod datafusion;
mod firmware;
mod fuzz;
mod interop;
mod man;
mod no_c;
mod package;
mod soak;
mod tasks;
mod toolchain;
mod web;

use std::process::ExitCode;

use cmd::Error;

fn main() -> ExitCode {
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<_, _>>()
    {
        Ok(args) => args,
        Err(bad) => {
            eprintln!("xtask: error: argument is not valid UTF-8: {bad:?}");
            return ExitCode::from(2);
        }
    };

    let Some((name, rest)) = args.split_first() else {
        eprint!("{}", tasks::usage());
        return ExitCode::from(2);
    };

    if matches!(name.as_str(), "help" | "-h" | "--help") {
        print!("{}", tasks::usage());
        return ExitCode::SUCCESS;
    }

    let Some(task) = tasks::find(name) else {
        eprintln!("xtask: error: unknown subcommand `{name}`\n");
        eprint!("{}", tasks::usage());
        return ExitCode::from(2);
    };

    if rest.iter().any(|a| a == "-h" || a == "--help") {
        print!("{}", tasks::usage());
        return ExitCode::SUCCESS;
    }

    match tasks::run(task, rest) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(msg)) => {
            eprintln!("xtask: error: {msg}\n");
            eprint!("{}", tasks::usage());
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("xtask: error: {err}");
            eprintln!("xtask: `{}` FAILED", task.name);
            ExitCode::FAILURE
        }
    }
}
