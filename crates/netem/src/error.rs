//! The crate's one error type: every message names the file, queue or field involved.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum NetemError {
    #[error("cannot read link config {path}: {source}")]
    ConfigRead {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `field` is the path of the value at fault followed by `: ` (`links[0].delay_us: `),
    /// empty when the text is no JSON at all.
    #[error("link config {path} is not valid JSON for casslab-netem: {field}{source}")]
    ConfigParse {
        path: PathBuf,
        field: String,
        source: serde_json::Error,
    },
    #[error("link config {path}: link {index} ({link}): {message}")]
    ConfigValue {
        path: PathBuf,
        index: usize,
        link: String,
        message: String,
    },
    #[error("link config {path}: group {index} ({group}): {message}")]
    ConfigGroup {
        path: PathBuf,
        index: usize,
        group: String,
        message: String,
    },
    #[error(
        "NFQUEUE {queue}: {step} failed: {source} (needs root and the nfnetlink_queue module)"
    )]
    Queue {
        queue: u16,
        step: &'static str,
        source: std::io::Error,
    },
    #[error("cannot write stats file {path}: {source}")]
    Stats {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{step} failed: {source}")]
    Os {
        step: &'static str,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, NetemError>;
