//! The reference client of issue 3's CPU goal: a bare loop on the scylla
//! driver with N requests in flight and nothing else (no histograms, no
//! intervals). `make bench` runs it beside casslab-load on the same lab so
//! "cheaper than the bare loop" is checked on the same day and machine.
//! With a rate, each request sleeps until its own due time, the way a
//! simple rate-limited client does.
//!
//! bare_loop HOST:PORT KEYSPACE OPS IN_FLIGHT [RATE_OPS_S]
//! (expects KEYSPACE.standard1 as `casslab-load stress write` creates it; writes
//! the same key and five 34-byte columns per row)

use futures::stream::{FuturesUnordered, StreamExt};
use scylla::client::session_builder::SessionBuilder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, String> {
    args.get(i)
        .ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("{what} {:?} is not valid", args[i]))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let host: String = arg(&args, 1, "HOST:PORT")?;
    let ks: String = arg(&args, 2, "KEYSPACE")?;
    let ops: u64 = arg(&args, 3, "OPS")?;
    let in_flight: usize = arg(&args, 4, "IN_FLIGHT")?;
    let rate: Option<f64> = if args.len() > 5 {
        Some(arg(&args, 5, "RATE_OPS_S")?)
    } else {
        None
    };
    let session = Arc::new(SessionBuilder::new().known_node(host).build().await?);
    let insert = Arc::new(
        session
            .prepare(format!(
                "INSERT INTO {ks}.standard1 (key, \"C0\", \"C1\", \"C2\", \"C3\", \"C4\") \
                 VALUES (?, ?, ?, ?, ?, ?)"
            ))
            .await?,
    );
    let next = Arc::new(AtomicU64::new(0));
    let start = tokio::time::Instant::now();
    let value = vec![7u8; 34];
    let mut tasks: FuturesUnordered<_> = (0..in_flight)
        .map(|_| {
            let (session, insert, next, value) =
                (session.clone(), insert.clone(), next.clone(), value.clone());
            async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= ops {
                        return;
                    }
                    if let Some(r) = rate {
                        tokio::time::sleep_until(start + Duration::from_secs_f64(i as f64 / r))
                            .await;
                    }
                    let key = format!("{i:010}").into_bytes();
                    let _ = session
                        .execute_unpaged(&insert, (key, &value, &value, &value, &value, &value))
                        .await;
                }
            }
        })
        .collect();
    while tasks.next().await.is_some() {}
    let s = start.elapsed().as_secs_f64();
    println!(
        "{{\"ops\": {ops}, \"elapsed_s\": {s:.3}, \"ops_s\": {:.1}}}",
        ops as f64 / s
    );
    Ok(())
}
