//! casslab-netem: the NFQUEUE packet-delay daemon of casslab labs.
//!
//! `casslab-netem run` holds each packet of a configured directed link for its delay
//! (plus jitter, FIFO per link) and drops the configured share; casslab starts it
//! inside the lab's network namespace and writes its link config.

mod config;
mod error;
mod links;
mod queue;
mod sched;

use clap::Parser;

use config::{Cli, Command};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(cmd) => queue::run(&cmd)?,
        Command::CheckConfig(cmd) => {
            let cfg = links::load(&cmd.config)?;
            let out: Vec<_> = cfg
                .links
                .iter()
                .map(|l| {
                    serde_json::json!({"mark": l.mark, "name": l.name,
                        "delay_us": l.delay_ns / 1000, "jitter_us": l.jitter_ns / 1000,
                        "loss_pct": l.loss * 100.0, "loss_burst": l.loss_burst})
                })
                .collect();
            println!("{}", serde_json::json!({"seed": cfg.seed, "links": out}));
        }
    }
    Ok(())
}
