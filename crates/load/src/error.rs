//! The crate's one error type. Messages say what failed, where, and with which value.

use std::path::PathBuf;

/// Everything that can stop casslab-load before or around a run.
///
/// Errors of single operations during a run are not `LoadError`s: they are
/// counted per operation type (see `stats::ErrorKind`) and never end the run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A command-line value that parses but makes no sense (e.g. zero workers).
    #[error("invalid option {option}: {reason}")]
    InvalidOption { option: String, reason: String },

    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    WriteFile {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A stages file that is not valid YAML/JSON or has an invalid stage.
    #[error("stages file {path}: {reason}")]
    Stages { path: PathBuf, reason: String },

    /// A cassandra-stress user profile with a syntax error or an unsupported field.
    #[error("profile {path}: {reason}")]
    Profile { path: PathBuf, reason: String },

    /// A distribution expression such as `gaussian(1..100,3)` that does not parse.
    #[error("invalid distribution {text:?}: {reason}")]
    Distribution { text: String, reason: String },

    /// The driver could not connect to any contact point.
    #[error("cannot connect to {hosts}: {reason}")]
    Connect { hosts: String, reason: String },

    /// A schema statement (CREATE/DROP/ALTER) failed.
    #[error("schema statement failed: {cql}: {reason}")]
    Schema { cql: String, reason: String },

    /// Preparing a statement failed.
    #[error("cannot prepare {cql}: {reason}")]
    Prepare { cql: String, reason: String },

    /// `options` met a value type its table lacks (a casslab-load bug, caught by its tests).
    #[error("cannot describe the options: {0}")]
    Describe(String),

    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl LoadError {
    /// True for what the user gave (an option value, a file): exit code 2, not 1.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::InvalidOption { .. }
                | Self::ReadFile { .. }
                | Self::Stages { .. }
                | Self::Profile { .. }
                | Self::Distribution { .. }
        )
    }
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, LoadError>;

impl LoadError {
    /// Shorthand for [`LoadError::InvalidOption`].
    pub fn option(option: &str, reason: impl Into<String>) -> Self {
        LoadError::InvalidOption {
            option: option.to_string(),
            reason: reason.into(),
        }
    }
}
