//! casslab-load: the casslab load generator. See `casslab-load --help`.
//!
//! Exit codes: 0 run completed, 1 error before or around the run (one line
//! `error: ...` on stderr), 2 what the user gave is wrong: the command line, an
//! option value, a stages or profile file (one line too), 3 the cluster
//! became unreachable (summary so far printed), 130 interrupted (summary so far
//! printed). No error prints a backtrace, RUST_BACKTRACE or not.

mod app;
mod config;
mod db;
mod describe;
mod error;
mod exec;
mod generator;
mod merge;
mod ranges;
mod stats;
mod tls;
mod units;
mod workload;

use exec::runner::EndReason;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    let cli = parse_cli();
    let io_threads = match &cli.command {
        config::Command::Ycsb(c) => c.conn.io_threads,
        config::Command::Stress(c) => c.conn.io_threads,
        config::Command::Iot(c) => c.conn.io_threads,
        config::Command::User(c) => c.conn.io_threads,
        config::Command::Merge(_) | config::Command::Options(_) => 1,
    };
    match real_main(cli, io_threads) {
        Ok(EndReason::Completed) => {}
        Ok(EndReason::Interrupted) => {
            eprintln!("casslab-load: interrupted; the summary covers the run so far");
            std::process::exit(130);
        }
        Ok(EndReason::ClusterLost) => {
            eprintln!("casslab-load: the cluster stopped answering (no successful operation within --unreachable-after); run ended, summary so far printed");
            std::process::exit(3);
        }
        Ok(EndReason::StageFailed) => {
            // The stage's error is the line above; the summary covers the stages before.
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {}", casslab_errline::one_line(&e));
            let usage = e
                .downcast_ref::<error::LoadError>()
                .is_some_and(error::LoadError::is_usage);
            std::process::exit(if usage { 2 } else { 1 });
        }
    }
}

/// The command line, or exit: help and version as clap prints them, any other
/// command-line error as one line `error: ...` and exit code 2.
fn parse_cli() -> config::Cli {
    casslab_errline::parse_or_exit()
}

/// Lines to stdout. A reader that closed the pipe early (`| head`) ends the output
/// quietly, as for any Unix filter; `println!` panicked there with a backtrace.
fn write_lines(lines: impl Iterator<Item = String>) -> std::io::Result<()> {
    use std::io::{ErrorKind, Write};
    let mut out = std::io::stdout().lock();
    let written = lines
        .map(|line| writeln!(out, "{line}"))
        .find(Result::is_err)
        .unwrap_or_else(|| out.flush());
    match written {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

fn real_main(cli: config::Cli, io_threads: usize) -> anyhow::Result<EndReason> {
    if let config::Command::Merge(m) = &cli.command {
        let lines = merge::run_lines(&m.logs, m.output.as_deref(), m.intervals)?;
        write_lines(lines.iter().map(ToString::to_string))?;
        return Ok(EndReason::Completed);
    }
    if let config::Command::Options(o) = &cli.command {
        describe::print(o.json).map_err(error::LoadError::Describe)?;
        return Ok(EndReason::Completed);
    }
    let rt = if io_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(io_threads)
            .enable_all()
            .build()
    }
    .map_err(error::LoadError::Runtime)?;
    let abort = Arc::new(AtomicBool::new(false));
    let end = rt.block_on(async {
        app::on_interrupt(abort.clone());
        app::run(cli, abort).await
    })?;
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;
    use clap::Parser;

    #[test]
    fn a_cause_quoted_by_its_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Err::<(), _>(error::LoadError::ReadFile {
            path: "x.yaml".into(),
            source: io,
        })
        .context("stages")
        .unwrap_err();
        assert_eq!(
            casslab_errline::one_line(&e),
            "stages: cannot read x.yaml: no such file"
        );
    }

    #[test]
    fn a_clap_error_becomes_its_first_line() {
        let err = config::Cli::try_parse_from(["casslab-load", "ycsb", "--bogus"]).unwrap_err();
        let line = casslab_errline::clap_line(&err.render().to_string());
        assert!(line.starts_with("unexpected argument '--bogus'"), "{line}");
        assert!(!line.contains('\n'));
    }
}
