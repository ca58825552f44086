//! casslab-load: the casslab load generator. See `casslab-load --help`.
//!
//! Exit codes: 0 run completed, 1 error before or around the run (message on
//! stderr), 2 command-line error (clap), 3 the cluster became unreachable
//! (summary so far printed), 130 interrupted (summary so far printed).

mod app;
mod config;
mod db;
mod error;
mod exec;
mod generator;
mod stats;
mod tls;
mod units;
mod workload;

use clap::Parser;
use exec::runner::EndReason;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() {
    let cli = config::Cli::parse();
    let threads = match &cli.command {
        config::Command::Ycsb(c) => c.conn.threads,
        config::Command::Stress(c) => c.conn.threads,
        config::Command::Iot(c) => c.conn.threads,
        config::Command::User(c) => c.conn.threads,
    };
    match real_main(cli, threads) {
        Ok(EndReason::Completed) => {}
        Ok(EndReason::Interrupted) => {
            eprintln!("casslab-load: interrupted; the summary covers the run so far");
            std::process::exit(130);
        }
        Ok(EndReason::ClusterLost) => {
            eprintln!("casslab-load: the cluster stopped answering (no successful operation within --unreachable-after); run ended, summary so far printed");
            std::process::exit(3);
        }
        Err(e) => {
            eprintln!("casslab-load: {e:#}");
            std::process::exit(1);
        }
    }
}

fn real_main(cli: config::Cli, threads: usize) -> anyhow::Result<EndReason> {
    let rt = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
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
