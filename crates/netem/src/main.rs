//! casslab-netem: the NFQUEUE packet-delay daemon of casslab labs.
//!
//! `casslab-netem run` holds each packet of a configured directed link for its delay
//! (plus jitter, FIFO per link) and drops the configured share; casslab starts it
//! inside the lab's network namespace and writes its link config.
//!
//! Exit codes: 0 ok, 1 failure (one line `error: ...` on stderr), 2 command-line
//! error (one line too). No error prints a backtrace, RUST_BACKTRACE or not.

mod config;
mod error;
mod links;
mod queue;
mod sched;

use config::{Cli, Command};

fn main() {
    let cli = parse_cli();
    if let Err(e) = real_main(cli) {
        eprintln!("error: {}", casslab_errline::one_line(&e));
        std::process::exit(1);
    }
}

fn real_main(cli: Cli) -> anyhow::Result<()> {
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
                        "loss_pct": l.loss * 100.0, "loss_burst": l.loss_burst,
                        "group": l.group})
                })
                .collect();
            let groups: Vec<_> = cfg
                .groups
                .iter()
                .map(|g| {
                    serde_json::json!({"id": g.id, "name": g.name, "rate_bit_s": g.rate_bit_s,
                        "queue_limit_bytes": g.queue_limit_bytes})
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({"seed": cfg.seed, "links": out, "groups": groups})
            );
        }
    }
    Ok(())
}

/// The command line, or exit: help and version as clap prints them, any other
/// command-line error as one line `error: ...` and exit code 2.
fn parse_cli() -> Cli {
    casslab_errline::parse_or_exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_quoted_by_its_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(error::NetemError::ConfigRead {
            path: "links.json".into(),
            source: io,
        });
        assert_eq!(
            casslab_errline::one_line(&e),
            "cannot read link config links.json: no such file"
        );
    }
}
