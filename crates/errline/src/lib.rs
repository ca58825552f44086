//! The one line `error: ...` that casslab-load and casslab-netem print for a failure or
//! a bad command line.

use clap::error::ErrorKind;

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

/// A rendered clap error on one line, without clap's own `error: ` prefix, its usage
/// and its "For more information" footer, and where to look for more.
///
/// Clap puts the details on further lines: the missing arguments under "the following
/// required arguments were not provided:", `[possible values: ...]` under an invalid
/// value, `tip: ...` lines. They are kept: a list under a line ending in `:` joins it
/// (items by `, `), a `[...]` line joins the line above, any other line follows `; `.
pub fn clap_line(rendered: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    // True while lines are items of a list whose header ended with `:`.
    let mut in_list = false;
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            in_list = false;
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match parts.last_mut() {
            Some(last) if line.starts_with('[') => {
                last.push(' ');
                last.push_str(line);
            }
            Some(last) if in_list => {
                last.push_str(if last.ends_with(':') { " " } else { ", " });
                last.push_str(line);
            }
            _ => parts.push(line.to_string()),
        }
        in_list = line.ends_with(':') || (in_list && !line.starts_with('['));
    }
    if parts.is_empty() {
        parts.push("invalid command line".into());
    }
    format!("{} (see --help)", parts.join("; "))
}

/// The one line for a clap error of `cmd`'s command line (not help or version, which
/// clap prints itself). An unknown or missing subcommand also lists the valid ones,
/// which clap's text leaves out.
pub fn clap_error(e: &clap::Error, cmd: &clap::Command) -> String {
    let names: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name())
        .collect();
    let valid = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    match e.kind() {
        // Bare `casslab-load`: one line, not the whole help on stderr.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand
            if !valid.is_empty() =>
        {
            format!("a subcommand is required: {valid} (see --help)")
        }
        ErrorKind::InvalidSubcommand if !valid.is_empty() => {
            let line = clap_line(&e.render().to_string());
            let text = line.trim_end_matches(" (see --help)");
            format!("{text}; valid subcommands: {valid} (see --help)")
        }
        _ => clap_line(&e.render().to_string()),
    }
}

/// Parses the command line of `P`, or exits: help and version as clap prints them, any
/// other command-line error as one line `error: ...` on stderr and exit code 2.
pub fn parse_or_exit<P: clap::Parser>() -> P {
    match P::try_parse() {
        Ok(p) => p,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
            _ => {
                eprintln!("error: {}", clap_error(&e, &P::command()));
                std::process::exit(2);
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{clap_line, one_line};
    use anyhow::anyhow;

    #[test]
    fn causes_are_joined_once_and_on_one_line() {
        let e = anyhow!("no such file").context("cannot read x.yaml: no such file");
        assert_eq!(one_line(&e), "cannot read x.yaml: no such file");
        let e = anyhow!("line 1\nline 2").context("stages");
        assert_eq!(one_line(&e), "stages: line 1; line 2");
    }

    #[test]
    fn a_clap_error_keeps_its_list_values_and_tips_on_one_line() {
        let missing = "error: the following required arguments were not provided:\n  \
                       --config <CONFIG>\n  --queue <Q>\n\nUsage: x run --config <CONFIG>\n\n\
                       For more information, try '--help'.\n";
        assert_eq!(
            clap_line(missing),
            "the following required arguments were not provided: --config <CONFIG>, \
             --queue <Q> (see --help)"
        );
        let invalid = "error: invalid value 'z' for '--workload <WORKLOAD>'\n  \
                       [possible values: a, b]\n\n  tip: a similar value exists: 'a'\n\n\
                       For more information, try '--help'.\n";
        assert_eq!(
            clap_line(invalid),
            "invalid value 'z' for '--workload <WORKLOAD>' [possible values: a, b]; \
             tip: a similar value exists: 'a' (see --help)"
        );
        assert_eq!(clap_line(""), "invalid command line (see --help)");
    }
}
