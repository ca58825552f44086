//! Whether a user profile's CQL statement may be sent twice with the same effect.
//! A request marked idempotent may be retried by the driver and re-issued by
//! `--error-retries`; a lightweight transaction (`IF ...`) or an update that adds
//! to a column (a counter, a list append or prepend) must not be, or a retry after a
//! timeout can apply it twice.

/// The statement's words and symbols, string literals and comments left out.
fn tokens(cql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = cql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                // A string literal ('' is a quote inside it).
                while let Some(d) = chars.next() {
                    if d == '\'' && chars.peek() != Some(&'\'') {
                        break;
                    }
                    if d == '\'' {
                        chars.next();
                    }
                }
            }
            '"' => {
                let mut name = String::new();
                for d in chars.by_ref() {
                    if d == '"' {
                        break;
                    }
                    name.push(d);
                }
                out.push(format!("\"{name}\""));
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if !(d.is_alphanumeric() || d == '_') {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
                out.push(word.to_ascii_lowercase());
            }
            c if c.is_whitespace() => {}
            c => out.push(c.to_string()),
        }
    }
    out
}

/// False for a lightweight transaction or an update that adds to or subtracts from
/// a column (`c = c + ?`, `l = ? + l`); true otherwise.
pub fn is_idempotent(cql: &str) -> bool {
    let t = tokens(cql);
    if t.iter().any(|w| w == "if") {
        return false;
    }
    if t.first().map(String::as_str) != Some("update") {
        return true;
    }
    let set = t.iter().position(|w| w == "set").map_or(t.len(), |i| i + 1);
    let end = t.iter().position(|w| w == "where").unwrap_or(t.len());
    let assignments = t.get(set..end.max(set)).unwrap_or_default();
    !assignments
        .split(|w| w == ",")
        .any(|a| matches!(a, [col, eq, rest @ ..] if eq == "=" && adds_to(col, rest)))
}

/// Whether the right-hand side of `col = ...` reads `col` itself with + or -.
fn adds_to(col: &str, rhs: &[String]) -> bool {
    let arith = |w: &String| w == "+" || w == "-";
    matches!(rhs, [first, op, ..] if first == col && arith(op))
        || matches!(rhs, [.., op, last] if last == col && arith(op))
}

#[cfg(test)]
mod tests {
    use super::is_idempotent;

    #[test]
    fn reads_and_plain_writes_are_idempotent() {
        assert!(is_idempotent("SELECT * FROM t WHERE k = ? LIMIT 10"));
        assert!(is_idempotent("UPDATE t SET v = ?, w = ? WHERE k = ?"));
        assert!(is_idempotent("INSERT INTO t (k, v) VALUES (?, ?)"));
        assert!(is_idempotent(
            "update t set v = 'if it adds: c = c + 1' where k = ?"
        ));
        assert!(is_idempotent("DELETE FROM t WHERE k = ?"));
    }

    #[test]
    fn lightweight_transactions_are_not() {
        assert!(!is_idempotent(
            "INSERT INTO t (k, v) VALUES (?, ?) IF NOT EXISTS"
        ));
        assert!(!is_idempotent("UPDATE t SET v = ? WHERE k = ? if v = ?"));
        assert!(!is_idempotent("DELETE FROM t WHERE k = ? IF EXISTS"));
    }

    #[test]
    fn counters_and_appends_are_not() {
        assert!(!is_idempotent("UPDATE t SET n = n + 1 WHERE k = ?"));
        assert!(!is_idempotent(
            "UPDATE t SET v = ?, \"N\" = \"N\" - ? WHERE k = ?"
        ));
        assert!(!is_idempotent("UPDATE t SET l = ? + l WHERE k = ?"));
        assert!(is_idempotent("UPDATE t SET n = m + 1 WHERE k = ?"));
    }
}
