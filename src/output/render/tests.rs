//! Unit tests of `render`.

use super::*;

#[test]
fn the_word_scan_finds_what_a_byte_scan_finds() {
    let naive = |b: &[u8]| b.iter().position(|&c| matches!(c, 0x1b | b'\r' | 0x08));
    // Every placement in and around a word, and bytes one bit off.
    let near = [
        0x1b, b'\r', 0x08, 0x9b, 0x8d, 0x88, 0x1a, 0x0c, 0x09, 0x00, 0xff, b'a',
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..40 {
        for _ in 0..200 {
            let v: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly plain, sometimes a special or a near miss.
                    if seed % 5 == 0 {
                        near[(seed >> 8) as usize % near.len()]
                    } else {
                        b'a' + (seed >> 16) as u8 % 26
                    }
                })
                .collect();
            assert_eq!(find_special(&v), naive(&v), "{v:?}");
        }
    }
}

/// The rules, the naive way, on a whole text.
fn reference(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let (mut line, mut col) = (Vec::<char>::new(), 0usize);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\u{1b}' => {
                let Some(&next) = chars.get(i) else { break };
                i += 1;
                match next {
                    '[' => {
                        while i < chars.len() && !('\u{40}'..='\u{7e}').contains(&chars[i]) {
                            i += 1;
                        }
                        i += 1;
                    }
                    ']' => loop {
                        match chars.get(i) {
                            None => break,
                            Some('\u{7}') => {
                                i += 1;
                                break;
                            }
                            Some('\u{1b}') if chars.get(i + 1) == Some(&'\\') => {
                                i += 2;
                                break;
                            }
                            Some(_) => i += 1,
                        }
                    },
                    '\u{20}'..='\u{2f}' => {
                        while i < chars.len() && ('\u{20}'..='\u{2f}').contains(&chars[i]) {
                            i += 1;
                        }
                        i += 1;
                    }
                    _ => {}
                }
            }
            '\r' if chars.get(i) == Some(&'\n') => {}
            '\r' => col = 0,
            '\n' => {
                out.extend(line.drain(..));
                out.push('\n');
                col = 0;
            }
            '\u{8}' => col = col.saturating_sub(1),
            c => {
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    out.extend(line);
    out
}

#[test]
fn the_rules() {
    assert_eq!(render_text("\u{1b}[1;31mred\u{1b}[0m plain"), "red plain");
    assert_eq!(render_text("10%\r20%\r30%\n"), "30%\n");
    assert_eq!(render_text("abc\u{8}\u{8}X\n"), "aXc\n");
    assert_eq!(render_text("a\r\nb\r\n"), "a\nb\n");
    assert_eq!(
        render_text("\u{1b}]0;title\u{7}x\u{1b}]8;;url\u{1b}\\y"),
        "xy"
    );
    assert_eq!(render_text("\u{1b}(Bz"), "z");
    assert_eq!(render_text("long line\rshort\n"), "shortline\n");
}

#[test]
fn streaming_matches_the_reference_on_random_input() {
    let pieces = [
        "a",
        "bc",
        "\r",
        "\n",
        "\r\n",
        "\u{8}",
        "\u{1b}[",
        "31m",
        "\u{1b}]0;t",
        "\u{7}",
        "\u{1b}\\",
        "\u{1b}(",
        "B",
        "é",
        "日本",
        " ",
        "100%",
        "\u{1b}",
        "[2K",
    ];
    let mut seed = 0x5EED_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let n = (next() % 40) as usize;
        let text: String = (0..n)
            .map(|_| pieces[(next() % pieces.len() as u64) as usize])
            .collect();
        // Streamed in random pieces (at char boundaries).
        let chars: Vec<char> = text.chars().collect();
        let mut r = Render::default();
        let mut out = String::new();
        let mut src_total = 0usize;
        let mut emit = |s: &str, src: usize| {
            out.push_str(s);
            src_total += src;
        };
        let mut i = 0;
        while i < chars.len() {
            let k = 1 + (next() % 5) as usize;
            let piece: String = chars[i..(i + k).min(chars.len())].iter().collect();
            r.push(&piece, piece.len(), &mut emit);
            i += k;
        }
        r.finish(true, &mut emit);
        assert_eq!(out, reference(&text), "{text:?}");
        assert_eq!(
            src_total,
            text.len(),
            "every source byte accounted: {text:?}"
        );
    }
}

#[test]
fn an_unfinished_read_leaves_a_cut_sequence_for_the_next() {
    let mut r = Render::default();
    let mut out = String::new();
    let mut emit = |s: &str, _: usize| out.push_str(s);
    r.push("ok\u{1b}[3", 6, &mut emit);
    assert_eq!(r.finish(false, &mut emit), 3);
    assert_eq!(out, "ok");
}
