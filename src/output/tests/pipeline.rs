//! The whole pipeline against a naive whole-input version, on random input and a big file.

use super::*;

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
        let r = render_file_chunked(&path, 0, 100, None, true, chunk, false).expect("read");
        assert_eq!(r.text, "first\nsecond é\nthird");
        assert_eq!(r.consumed, 21);
        let r = render_file_chunked(&path, 6, 100, None, false, chunk, false).expect("read");
        assert_eq!((r.text.as_str(), r.consumed), ("second é\nthird", 15));
        let r = render_file_chunked(&path, 0, 100, Some(&re), false, chunk, false).expect("read");
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

// ---- tail ----

/// `tail` the naive way: the whole rendering, its last `n` lines, trimmed
/// again (a kept part may start with blank lines), and how many lines came
/// before them.
fn tail_reference(bytes: &[u8], filter: Option<&Regex>, n: u64) -> (String, u64) {
    let all = render_bytes(bytes, usize::MAX, filter, true).text;
    if all.is_empty() {
        return (String::new(), 0);
    }
    let lines: Vec<&str> = all.split('\n').collect();
    let left = (lines.len() as u64).saturating_sub(n);
    let kept = lines[left as usize..].join("\n");
    let again = render_bytes(kept.as_bytes(), usize::MAX, None, true).text;
    (again, left)
}

#[test]
fn tail_matches_reference_on_random_inputs() {
    let mut rng = Rng(0x7A11_5EED);
    let filter = Regex::new("(?i)error|a").expect("regex");
    let dir = std::env::temp_dir().join(format!("bashtools-tail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out");
    for round in 0..1500 {
        let bytes = random_text(&mut rng, round % 50);
        std::fs::write(&path, &bytes).unwrap();
        let n = 1 + rng.below(6) as u64;
        let filter = (round % 3 == 0).then_some(&filter);
        let (got, left) =
            render_file_tail(&path, 0, usize::MAX, filter, true, n, false).expect("rendered");
        let expected = tail_reference(&bytes, filter, n);
        assert_eq!(
            (got.text, left),
            expected,
            "round {round}, tail {n}, input {:?}",
            String::from_utf8_lossy(&bytes)
        );
        assert_eq!(got.consumed, bytes.len() as u64, "everything is consumed");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- rendering in the pipeline ----

/// Random output as a terminal program writes it: colours, progress bars
/// redrawn with `\r`, backspaces, `\r\n`, multi-byte chars.
fn random_terminal(rng: &mut Rng, tokens: usize) -> Vec<u8> {
    const TOKENS: &[&str] = &[
        "a",
        "foo",
        "ERROR",
        " ",
        "\n",
        "\r",
        "\r\n",
        "\u{8}",
        "\u{1b}[31m",
        "\u{1b}[0m",
        "\u{1b}]0;title\u{7}",
        "\u{1b}(B",
        "é",
        "日本",
        "100%",
        "  \n",
        "\u{1b}[2K",
    ];
    (0..tokens)
        .flat_map(|_| TOKENS[rng.below(TOKENS.len())].bytes())
        .collect()
}

#[test]
fn rendering_in_the_pipeline_is_rendering_then_the_rest() {
    let mut rng = Rng(0xC0FF_EE11);
    let filter = Regex::new("(?i)error|a").expect("regex");
    let dir = std::env::temp_dir().join(format!("bashtools-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out");
    for round in 0..1500 {
        let bytes = random_terminal(&mut rng, round % 40);
        std::fs::write(&path, &bytes).unwrap();
        let limit = rng.below(60);
        let filter = (round % 3 == 0).then_some(&filter);
        let chunk = 1 + rng.below(7);
        let got = render_file_chunked(&path, 0, limit, filter, true, chunk, true).expect("read");
        let rendered = render::render_text(&String::from_utf8_lossy(&bytes));
        let want = render_bytes(rendered.as_bytes(), limit, filter, true);
        assert_eq!(
            (got.text.as_str(), got.truncated),
            (want.text.as_str(), want.truncated),
            "round {round}: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        assert_eq!(got.consumed, bytes.len() as u64);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_running_read_leaves_a_cut_sequence_and_a_last_cr_for_the_next() {
    let dir = std::env::temp_dir().join(format!("bashtools-render-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out");
    std::fs::write(&path, "50%\r60%\r").unwrap();
    let r = render_file_chunked(&path, 0, 100, None, false, 3, true).expect("read");
    assert_eq!((r.text.as_str(), r.consumed), ("60%", 7));
    std::fs::write(&path, "done \u{1b}[3").unwrap();
    let r = render_file_chunked(&path, 0, 100, None, false, 4, true).expect("read");
    assert_eq!((r.text.as_str(), r.consumed), ("done", 5));
    std::fs::remove_dir_all(&dir).unwrap();
}
