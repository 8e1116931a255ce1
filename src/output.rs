//! TEMPORARY STUB
pub(crate) struct Rendered { pub text: String, pub consumed: u64, pub truncated: u64 }
pub(crate) fn render_file(path: &std::path::Path, start: u64, limit: usize, filter: Option<&regex::Regex>, finished: bool) -> std::io::Result<Rendered> {
    let b = std::fs::read(path)?;
    let b = &b[start as usize..];
    let _ = (limit, filter, finished);
    let s = String::from_utf8_lossy(b);
    let t = s.trim_end();
    let t = t.trim_start_matches(|c: char| c == '\n');
    Ok(Rendered { text: t.to_string(), consumed: b.len() as u64, truncated: 0 })
}
