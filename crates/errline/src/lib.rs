//! The one line `error: ...` that casslab-load and casslab-netem print for a failure or
//! a bad command line.

/// The error and its causes joined by `: `, each text once: a cause that a message
/// already quotes (thiserror's `{source}`) is not repeated; newlines become `; `.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', "; ")
}

/// The first line of a rendered clap error, without clap's own `error: ` prefix, and
/// where to look for more.
pub fn clap_line(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or("invalid command line");
    format!(
        "{} (see --help)",
        first.trim().trim_start_matches("error: ")
    )
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use anyhow::anyhow;

    #[test]
    fn causes_are_joined_once_and_on_one_line() {
        let e = anyhow!("no such file").context("cannot read x.yaml: no such file");
        assert_eq!(one_line(&e), "cannot read x.yaml: no such file");
        let e = anyhow!("line 1\nline 2").context("stages");
        assert_eq!(one_line(&e), "stages: line 1; line 2");
    }
}
