//! Each stage alone: HeadTail, Trimmer, LineFilter.

use super::*;

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
