//! casslab-netem: the NFQUEUE packet-delay daemon (issue 4).
//!
//! Not implemented yet. The binary exists so the workspace layout matches
//! ARCHITECTURE.md; it refuses to run rather than pretend to delay packets.

fn main() {
    eprintln!("casslab-netem: not implemented yet (network emulation is issue 4)");
    std::process::exit(2);
}
