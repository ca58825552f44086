//! Command line (clap derive): one struct per subcommand, doc comments are the `--help`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// casslab-netem: per-link packet delay, jitter and loss for a casslab lab, via NFQUEUE.
///
/// Packets reach the daemon through `iptables -t mangle -A PREROUTING -m mark --mark M -j
/// NFQUEUE --queue-num N --queue-bypass` rules inside the lab's network namespace; the
/// packet mark M names the directed link (casslab sets it in mangle OUTPUT from the
/// connection's owning node and direction). Each link has its own FIFO, so jitter never
/// reorders packets within a link.
#[derive(Debug, Parser)]
#[command(name = "casslab-netem", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon on one NFQUEUE queue until SIGTERM; SIGHUP reloads the link config.
    ///
    /// Example: ip netns exec casslab-edge chrt -f 50 casslab-netem run --queue-num 0
    /// --config /root/.casslab/labs/edge/net/netem.json
    Run(RunCommand),
    /// Parse and validate a link config file, print its links as JSON, and exit.
    ///
    /// Example: casslab-netem check-config --config netem.json
    CheckConfig(CheckConfigCommand),
}

#[derive(Debug, Args)]
pub struct RunCommand {
    /// NFQUEUE queue number the iptables rules send packets to.
    #[arg(long, default_value_t = 0)]
    pub queue_num: u16,
    /// JSON link config: {"seed": 1, "links": [{"mark": 212140033, "name": "client->node1",
    /// "delay_us": 10000, "jitter_us": 0, "loss_pct": 0.0, "loss_burst": 1.0, "group": 1}],
    /// "groups": [{"id": 1, "name": "wifi", "rate_bit_s": 40000000}]}; `mark` is the packet
    /// mark (non-zero, unique) of the link's packets, `name` only a label; links of one
    /// group share its rate (a half-duplex medium, links taking turns per packet).
    #[arg(long)]
    pub config: PathBuf,
    /// Write counters as JSON to this file about once a second (atomically).
    #[arg(long)]
    pub stats_file: Option<PathBuf>,
    /// Kernel queue length in packets (packets beyond it are dropped, like a full buffer).
    #[arg(long, default_value_t = 65_536)]
    pub queue_max_len: u32,
}

#[derive(Debug, Args)]
pub struct CheckConfigCommand {
    /// JSON link config to validate.
    #[arg(long)]
    pub config: PathBuf,
}
