//! The renderer's tests: each stage alone, the whole pipeline against a naive
//! whole-input version on random input, and a 200 MB file.

use super::head_tail::{split_after_chars, start_of_last_chars, HeadTail};
use super::*;
use std::io::Write;
use std::time::Instant;

use crate::test_rng::Rng;

/// Random bytes biased toward what breaks UTF-8 decoders: lead bytes of every
/// length, stray continuation bytes, overlongs, surrogates and plain ASCII.
fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    const INTERESTING: &[u8] = &[
        b'a', b'\n', b' ', 0x80, 0x8F, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF,
        0xF0, 0xF4, 0xF5, 0xFF,
    ];
    (0..len)
        .map(|_| match rng.below(3) {
            0 => INTERESTING[rng.below(INTERESTING.len())],
            1 => 0x80 + rng.below(0x40) as u8,
            _ => rng.next() as u8,
        })
        .collect()
}

/// Random output made of words, whitespace (ASCII and not), multi-byte chars and
/// broken sequences, so the trimming, filtering and truncation edges all occur.
fn random_text(rng: &mut Rng, tokens: usize) -> Vec<u8> {
    const TOKENS: &[&[u8]] = &[
        b"a",
        b"foo",
        b"ERROR",
        b" ",
        b"          ",
        b"\t",
        b"\n",
        b"\n\n\n",
        b"\r\n",
        "é".as_bytes(),
        "日本".as_bytes(),
        "🎉".as_bytes(),
        "\u{2003}".as_bytes(),
        &[0xFF],
        &[0xE2, 0x82],
        &[0xF0, 0x9F],
        &[0x80],
    ];
    let mut out = Vec::new();
    for _ in 0..tokens {
        out.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
    }
    out
}

fn decode_chunked(bytes: &[u8], chunk: usize, finish: bool) -> (String, usize) {
    let mut stream = Utf8Stream::default();
    let mut out = String::new();
    let mut src = 0;
    for piece in bytes.chunks(chunk) {
        stream.feed(piece, |text, len| {
            out.push_str(text);
            src += len;
        });
    }
    if finish {
        stream.finish(|text, len| {
            out.push_str(text);
            src += len;
        });
    }
    (out, src)
}

/// Length of an incomplete (but so far valid) sequence ending `bytes`.
fn incomplete_suffix_len(bytes: &[u8]) -> usize {
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(_) => return 0,
            Err(e) => match e.error_len() {
                None => return rest.len() - e.valid_up_to(),
                Some(n) => rest = &rest[e.valid_up_to() + n..],
            },
        }
    }
}

fn cap_prefix(line: &str, cap: usize) -> &str {
    let mut end = cap.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// The rules applied naively to the whole input in memory.
fn reference(
    bytes: &[u8],
    limit: usize,
    filter: Option<&Regex>,
    finished: bool,
    cap: usize,
) -> Rendered {
    let incomplete = if finished {
        0
    } else {
        incomplete_suffix_len(bytes)
    };
    let decodable = &bytes[..bytes.len() - incomplete];
    let text = String::from_utf8_lossy(decodable).into_owned();
    let mut consumed = decodable.len() as u64;
    let filtered = match filter {
        None => text,
        Some(re) => {
            let mut out = String::new();
            let segments: Vec<&str> = text.split('\n').collect();
            let (last, complete) = segments.split_last().expect("split yields one");
            for line in complete {
                let kept = cap_prefix(line, cap);
                if re.is_match(kept) {
                    out.push_str(kept);
                    out.push('\n');
                }
            }
            if finished || last.len() > cap {
                let kept = cap_prefix(last, cap);
                if !last.is_empty() && re.is_match(kept) {
                    out.push_str(kept);
                }
            } else {
                consumed = bytes
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i as u64 + 1);
            }
            out
        }
    };
    let mut rest = filtered.as_str();
    while let Some(i) = rest.find('\n') {
        if !rest[..i].chars().all(char::is_whitespace) {
            break;
        }
        rest = &rest[i + 1..];
    }
    let trimmed = rest.trim_end();
    let n = trimmed.chars().count();
    if n <= limit {
        return Rendered {
            text: trimmed.to_string(),
            consumed,
            truncated: 0,
        };
    }
    let head: String = trimmed.chars().take(limit / 2).collect();
    let tail: String = trimmed.chars().skip(n - (limit - limit / 2)).collect();
    let m = n - limit;
    Rendered {
        text: format!("{head}\n\n... [{m} characters truncated] ...\n\n{tail}"),
        consumed,
        truncated: m as u64,
    }
}

fn marker(m: usize) -> String {
    format!("\n\n... [{m} characters truncated] ...\n\n")
}

fn text_of(input: &str, limit: usize) -> String {
    render_bytes(input.as_bytes(), limit, None, true).text
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("bashtools-output-{}-{name}", std::process::id()))
}

/// Removes the file even when the test fails.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// ---- helpers ----

#[test]
fn char_spans() {
    let s = "aé日🎉b";
    for k in 0..8 {
        let (end, taken) = split_after_chars(s, k);
        let expected: String = s.chars().take(k).collect();
        assert_eq!(&s[..end], expected);
        assert_eq!(taken, expected.chars().count());
        let start = start_of_last_chars(s, k);
        let n = s.chars().count();
        let expected: String = s.chars().skip(n.saturating_sub(k)).collect();
        assert_eq!(&s[start..], expected);
    }
    assert_eq!(split_after_chars("", 3), (0, 0));
    assert_eq!(start_of_last_chars("", 3), 0);
}

// ---- Utf8Stream ----

#[test]
fn utf8_matches_from_utf8_lossy_on_random_bytes() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..3000 {
        let bytes = random_bytes(&mut rng, round % 40);
        let expected = String::from_utf8_lossy(&bytes);
        for chunk in 1..=7 {
            let (decoded, src) = decode_chunked(&bytes, chunk, true);
            assert_eq!(decoded, expected, "bytes {bytes:x?} chunk {chunk}");
            assert_eq!(src, bytes.len());
        }
    }
}

#[test]
fn utf8_split_multibyte_chars() {
    let text = "é日本🎉x";
    for chunk in 1..=7 {
        assert_eq!(decode_chunked(text.as_bytes(), chunk, true).0, text);
    }
}

#[test]
fn utf8_holds_back_incomplete_end_only() {
    let mut stream = Utf8Stream::default();
    let mut out = String::new();
    stream.feed(&[b'a', 0xF0, 0x9F], |t, _| out.push_str(t));
    assert_eq!(out, "a");
    assert_eq!(stream.pending_len(), 2);
    stream.feed(&[0x8E], |t, _| out.push_str(t));
    assert_eq!(stream.pending_len(), 3);
    stream.feed(&[0x89, b'b'], |t, _| out.push_str(t));
    assert_eq!(out, "a🎉b");
    assert_eq!(stream.pending_len(), 0);
    // A truly invalid byte at the end is not held back.
    stream.feed(&[b'c', 0xFF], |t, _| out.push_str(t));
    assert_eq!(stream.pending_len(), 0);
    assert_eq!(out, "a🎉bc\u{FFFD}");
    // A held prefix broken by the next byte is one U+FFFD; the byte is kept.
    stream.feed(&[0xE2, 0x82], |t, _| out.push_str(t));
    stream.feed(b"z", |t, _| out.push_str(t));
    assert_eq!(out, "a🎉bc\u{FFFD}\u{FFFD}z");
}

mod pipeline;
mod stages;
