//! The renderer's tests: each stage alone, the whole pipeline against a naive
//! whole-input version on random input, and a 200 MB file.

use super::*;
use std::io::Write;
use std::time::Instant;

/// Small deterministic PRNG (xorshift64*), so the random tests need no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

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

// ---- HeadTail ----

fn head_tail(pieces: &[&str], limit: usize) -> (String, u64) {
    let mut keeper = HeadTail::new(limit);
    for piece in pieces {
        keeper.push_str(piece);
    }
    keeper.render()
}

#[test]
fn head_tail_around_the_limit() {
    for limit in [0usize, 1, 2, 5, 6] {
        for n in limit.saturating_sub(1)..=limit + 1 {
            let text: String = "é日🎉a".chars().cycle().take(n).collect();
            let (out, dropped) = head_tail(&[&text], limit);
            if n <= limit {
                assert_eq!(out, text);
                assert_eq!(dropped, 0);
            } else {
                let head: String = text.chars().take(limit / 2).collect();
                let tail: String = text.chars().skip(n - (limit - limit / 2)).collect();
                assert_eq!(out, format!("{head}{}{tail}", marker(n - limit)));
                assert_eq!(dropped, (n - limit) as u64);
            }
        }
    }
}

#[test]
fn head_tail_limit_zero_keeps_nothing() {
    assert_eq!(head_tail(&["abc", "日本"], 0), (marker(5), 5));
    assert_eq!(head_tail(&[], 0), (String::new(), 0));
    assert_eq!(head_tail(&["ab", "c"], 1), (format!("{}c", marker(2)), 2));
}

#[test]
fn head_tail_small_pieces_equal_one_big_piece() {
    let mut rng = Rng(7);
    let text: String = (0..20_000)
        .map(|i| ['a', 'é', '日', '🎉', '\n'][(i * 7 + i / 3) % 5])
        .collect();
    for limit in [0, 1, 7, 100, 10_001, 30_000] {
        let whole = head_tail(&[&text], limit);
        let mut keeper = HeadTail::new(limit);
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let (end, _) = split_after_chars(rest, 1 + rng.below(50));
            keeper.push_str(&rest[..end]);
            rest = &rest[end..];
        }
        assert_eq!(keeper.render(), whole, "limit {limit}");
    }
}

#[test]
fn head_tail_gap_counts_exactly() {
    // A run kept as head + gap + tail moves into another keeper losslessly.
    let run: String = " \t\u{2003}".chars().cycle().take(1000).collect();
    for limit in [0, 1, 4, 9] {
        let mut held = HeadTail::new(limit);
        held.push_str(&run);
        let mut out = HeadTail::new(limit);
        out.push_str("ab");
        held.move_into(&mut out);
        out.push_str("xyz");
        let expected = head_tail(&["ab", &run, "xyz"], limit);
        assert_eq!(out.render(), expected, "limit {limit}");
    }
}

// ---- Trimmer ----

fn trimmed(pieces: &[&str], limit: usize) -> String {
    let mut trim = Trimmer::new(limit);
    for piece in pieces {
        trim.push(piece);
    }
    trim.finish().0
}

#[test]
fn trimmer_examples() {
    assert_eq!(trimmed(&["\n\n  foo"], 100), "  foo");
    assert_eq!(trimmed(&["  \n\t\nx"], 100), "x");
    assert_eq!(trimmed(&["a  \n b \n\n  "], 100), "a  \n b");
    assert_eq!(trimmed(&[" \n \r\n\u{2003}\n"], 100), "");
    assert_eq!(trimmed(&[], 100), "");
    // The same split into one-char pieces.
    let chars: Vec<String> = "\n \n  foo \n bar\n\n ".chars().map(String::from).collect();
    let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(trimmed(&pieces, 100), "  foo \n bar");
}

#[test]
fn trimmer_huge_whitespace_runs() {
    let spaces = " ".repeat(10_000);
    // Inner run much longer than the limit: counted, held as head + tail only.
    let out = trimmed(&["a", &spaces, &spaces, "b", &spaces], 10);
    assert_eq!(out, format!("a    {}    b", marker(20_002 - 10)));
    // Leading indentation longer than the limit.
    let out = trimmed(&["\n", &spaces, "b"], 4);
    assert_eq!(out, format!("  {} b", marker(10_001 - 4)));
    // Whitespace only, without a newline.
    assert_eq!(trimmed(&[&spaces, &spaces], 4), "");
}

// ---- LineFilter ----

#[test]
fn filter_keeps_matching_lines() {
    let re = Regex::new("(?i)error").expect("regex");
    let input = "ok\nError: one\nfine\nERROR two\nlast error";
    let r = render_bytes(input.as_bytes(), 1000, Some(&re), true);
    assert_eq!(r.text, "Error: one\nERROR two\nlast error");
    assert_eq!(r.consumed, input.len() as u64);
    // Not finished: the unterminated last line is left for the next read.
    let r = render_bytes(input.as_bytes(), 1000, Some(&re), false);
    assert_eq!(r.text, "Error: one\nERROR two");
    assert_eq!(r.consumed, input.rfind('\n').map_or(0, |i| i as u64 + 1));
}

#[test]
fn filter_caps_long_lines() {
    let re = Regex::new("x").expect("regex");
    let r = render_bytes_chunked(b"aaaaax\nbx\naaaaaaaaaa", 100, Some(&re), false, 3, 5);
    // "aaaaax" is matched on "aaaaa" only; the unfinished long last line is
    // consumed because it is over the cap.
    assert_eq!(r.text, "bx");
    assert_eq!(r.consumed, 20);
    let re = Regex::new("a").expect("regex");
    let r = render_bytes_chunked("aé日\nb".as_bytes(), 100, Some(&re), true, 1, 4);
    assert_eq!(r.text, "aé");
    // Empty-matching regexes keep blank lines in the middle.
    let re = Regex::new("").expect("regex");
    let r = render_bytes(b"a\n\nb\n", 100, Some(&re), true);
    assert_eq!(r.text, "a\n\nb");
}

#[test]
fn filter_default_cap_is_one_mebibyte() {
    let re = Regex::new("x").expect("regex");
    let mut input = "x".repeat(LINE_CAP + LINE_CAP / 2).into_bytes();
    input.extend_from_slice(b"\nno\nyes x");
    let r = render_bytes(&input, 10, Some(&re), true);
    // The long line is kept on its first LINE_CAP bytes, then "\n", then "yes x".
    let n = LINE_CAP + 1 + 5;
    assert_eq!(r.truncated, (n - 10) as u64);
    assert_eq!(r.text, format!("xxxxx{}yes x", marker(n - 10)));
    // Unfinished and over the cap: the long partial line is taken and consumed.
    let long = "x".repeat(LINE_CAP + 1);
    let r = render_bytes(long.as_bytes(), 10, Some(&re), false);
    assert_eq!(r.consumed, long.len() as u64);
    assert_eq!(r.truncated, (LINE_CAP - 10) as u64);
}

// ---- the whole pipeline ----

#[test]
fn render_matches_reference_on_random_inputs() {
    let mut rng = Rng(0xDEAD_BEEF);
    let filters = [
        Regex::new("(?i)error").expect("regex"),
        Regex::new("é|a").expect("regex"),
        Regex::new("^$").expect("regex"),
    ];
    for round in 0..4000 {
        let bytes = random_text(&mut rng, round % 60);
        let limit = rng.below(40);
        let chunk = 1 + rng.below(if round % 2 == 0 { 7 } else { 300 });
        let cap = if rng.below(2) == 0 {
            1 + rng.below(12)
        } else {
            LINE_CAP
        };
        let finished = rng.below(2) == 0;
        let filter = match rng.below(4) {
            0 => None,
            i => Some(&filters[i - 1]),
        };
        let got = render_bytes_chunked(&bytes, limit, filter, finished, chunk, cap);
        let expected = reference(&bytes, limit, filter, finished, cap);
        assert_eq!(
            got, expected,
            "input {:?} limit {limit} chunk {chunk} cap {cap} finished {finished} filter {filter:?}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

#[test]
fn truncation_at_the_limit() {
    for limit in [9usize, 10] {
        let h = limit / 2;
        let t = limit - h;
        for n in [limit - 1, limit, limit + 1] {
            let text: String = "é日本🎉x".chars().cycle().take(n).collect();
            let r = render_bytes(text.as_bytes(), limit, None, true);
            if n <= limit {
                assert_eq!(r.text, text);
                assert_eq!(r.truncated, 0);
            } else {
                let head: String = text.chars().take(h).collect();
                let tail: String = text.chars().skip(n - t).collect();
                assert_eq!(r.text, format!("{head}{}{tail}", marker(1)));
                assert_eq!(r.truncated, 1);
            }
        }
    }
}

#[test]
fn tiny_limits() {
    assert_eq!(text_of("abc", 0), marker(3));
    assert_eq!(text_of("", 0), "");
    assert_eq!(text_of("  \n  ", 0), "");
    assert_eq!(text_of("a", 1), "a");
    assert_eq!(text_of("日本", 1), format!("{}本", marker(1)));
    let r = render_bytes("é".repeat(100).as_bytes(), 0, None, true);
    assert_eq!((r.text, r.truncated), (marker(100), 100));
}

#[test]
fn consumption() {
    // Not finished: an incomplete sequence at the end stays for the next read.
    let r = render_bytes(&[b'a', b'b', 0xE6, 0x97], 100, None, false);
    assert_eq!((r.text.as_str(), r.consumed), ("ab", 2));
    // Finished: it is consumed as U+FFFD.
    let r = render_bytes(&[b'a', b'b', 0xE6, 0x97], 100, None, true);
    assert_eq!((r.text.as_str(), r.consumed), ("ab\u{FFFD}", 4));
    // A truly invalid byte at the end is consumed even when not finished.
    let r = render_bytes(&[b'a', 0xFF], 100, None, false);
    assert_eq!((r.text.as_str(), r.consumed), ("a\u{FFFD}", 2));
    let r = render_bytes(b"", 100, None, false);
    assert_eq!((r.text.as_str(), r.consumed, r.truncated), ("", 0, 0));
}

#[test]
fn file_ranges_and_errors() {
    let path = temp_path("ranges");
    let _guard = TempFile(path.clone());
    std::fs::write(&path, "first\nsecond é\nthird").expect("write");
    let re = Regex::new("i").expect("regex");
    for chunk in [1, 2, 3, 64 * 1024] {
        let r = render_file_chunked(&path, 0, 100, None, true, chunk).expect("read");
        assert_eq!(r.text, "first\nsecond é\nthird");
        assert_eq!(r.consumed, 21);
        let r = render_file_chunked(&path, 6, 100, None, false, chunk).expect("read");
        assert_eq!((r.text.as_str(), r.consumed), ("second é\nthird", 15));
        let r = render_file_chunked(&path, 0, 100, Some(&re), false, chunk).expect("read");
        assert_eq!((r.text.as_str(), r.consumed), ("first", 16));
    }
    // Starting at or past the end reads nothing.
    let r = render_file(&path, 21, 100, None, true).expect("read");
    assert_eq!((r.text.as_str(), r.consumed), ("", 0));
    let r = render_file(&path, 1000, 100, None, true).expect("read");
    assert_eq!((r.text.as_str(), r.consumed), ("", 0));
    assert!(render_file(&temp_path("missing"), 0, 100, None, true).is_err());
}

/// Writes `buf` `times` times to a new file.
fn write_repeated(path: &Path, buf: &[u8], times: usize) {
    let mut file = std::io::BufWriter::new(File::create(path).expect("create"));
    for _ in 0..times {
        file.write_all(buf).expect("write");
    }
    file.flush().expect("flush");
}

/// 1 MiB of numbered lines with multi-byte chars, and its char count.
fn megabyte_of_lines() -> (Vec<u8>, usize) {
    let mut buf = String::new();
    let mut i = 0;
    while buf.len() < 1024 * 1024 - 64 {
        buf.push_str(&format!("line {i:06} é 日本 🎉 some output text\n"));
        i += 1;
    }
    let chars = buf.chars().count();
    (buf.into_bytes(), chars)
}

#[test]
fn big_file_is_bounded_and_exact() {
    let path = temp_path("200mb");
    let _guard = TempFile(path.clone());
    let (buf, chars) = megabyte_of_lines();
    let times = 200 * 1024 * 1024 / buf.len() + 1;
    write_repeated(&path, &buf, times);
    let limit = 30_001;
    let r = render_file(&path, 0, limit, None, true).expect("read");
    // The final "\n" is trailing whitespace.
    let n = chars * times - 1;
    let m = n - limit;
    assert_eq!(r.truncated, m as u64);
    assert_eq!(r.consumed, (buf.len() * times) as u64);
    let text = std::str::from_utf8(&buf).expect("utf8");
    let head: String = text.chars().take(limit / 2).collect();
    let tail_len = limit - limit / 2;
    let trimmed = text.trim_end();
    let tail: String = trimmed
        .chars()
        .skip(trimmed.chars().count() - tail_len)
        .collect();
    assert_eq!(r.text, format!("{head}{}{tail}", marker(m)));
    assert_eq!(r.text.chars().count(), limit + marker(m).chars().count());
}

/// Run by hand: `cargo test --release -- --ignored --nocapture throughput`.
#[test]
#[ignore]
fn throughput_1gib() {
    let path = temp_path("1gib");
    let _guard = TempFile(path.clone());
    let mut ascii = Vec::new();
    let mut i = 0;
    while ascii.len() < 1024 * 1024 {
        ascii.extend_from_slice(format!("line {i:06} of some plain ascii output\n").as_bytes());
        i += 1;
    }
    ascii.truncate(1024 * 1024);
    let (utf8, _) = megabyte_of_lines();
    let re = Regex::new("(?i)line 0000[0-9]{2} ").expect("regex");
    for (name, buf) in [("ascii", &ascii), ("utf-8", &utf8)] {
        write_repeated(&path, buf, 1024);
        let bytes = (buf.len() * 1024) as f64;
        // Once to warm the page cache, then timed.
        render_file(&path, 0, 30_000, None, true).expect("read");
        for limit in [30_000, 1_000_000] {
            let started = Instant::now();
            let r = render_file(&path, 0, limit, None, true).expect("read");
            let secs = started.elapsed().as_secs_f64();
            assert!(r.truncated > 0);
            println!(
                "{name}, limit {limit}: {:.0} MB/s ({secs:.3} s for {:.0} MB)",
                bytes / secs / 1e6,
                bytes / 1e6
            );
        }
        let started = Instant::now();
        render_file(&path, 0, 30_000, Some(&re), true).expect("read");
        let secs = started.elapsed().as_secs_f64();
        println!("{name}, filtered: {:.0} MB/s", bytes / secs / 1e6);
    }
}
