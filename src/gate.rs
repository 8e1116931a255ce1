//! TEMPORARY STUB (being replaced)
/// stub
pub fn check_allowed<S: AsRef<str>>(line: &str, allowed: &[S]) -> Result<(), String> {
    let w = line.split_whitespace().next().unwrap_or("");
    if allowed.iter().any(|a| a.as_ref() == w) {
        Ok(())
    } else {
        Err(format!("Command not allowed: {w}"))
    }
}
