//! Reading bash's `export -p`: the exported variables a command ended with,
//! as `(NAME, VALUE)` pairs, for the persisted environment
//! (`persist_environment`).
//!
//! The text is bash's own quoting, and nothing of it is ever evaluated:
//! each line is `declare -FLAGS NAME="VALUE"` (or `export NAME="VALUE"` in
//! POSIX mode), `NAME` alone for a variable exported but without a value,
//! and a value holding control characters quoted `$'…'` (C escapes, octal
//! bytes) instead of `"…"` (only `"`, `\`, `$` and `` ` `` escaped). A
//! program the command started may write to the same record: so anything
//! that is not exactly that form — a name that is not an identifier, an
//! unknown escape, a line cut short — makes the whole record unreadable,
//! and nothing is carried.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// The exported variables with a value, in the order bash listed them;
/// `None` when the text is not bash's `export -p` output.
pub(crate) fn parse(text: &[u8]) -> Option<Vec<(OsString, OsString)>> {
    let mut out = Vec::new();
    let mut p = Parser { b: text, i: 0 };
    while p.i < p.b.len() {
        if let Some(pair) = p.line()? {
            out.push(pair);
        }
    }
    Some(out)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn eat(&mut self, s: &[u8]) -> bool {
        if self.b[self.i..].starts_with(s) {
            self.i += s.len();
            true
        } else {
            false
        }
    }

    fn next(&mut self) -> Option<u8> {
        let c = *self.b.get(self.i)?;
        self.i += 1;
        Some(c)
    }

    /// One entry and its newline: `Some(None)` for a variable without a
    /// value, or one that is not a plain string (an array).
    fn line(&mut self) -> Option<Option<(OsString, OsString)>> {
        let mut plain = true;
        if self.eat(b"declare -") {
            let start = self.i;
            while self.b.get(self.i).is_some_and(u8::is_ascii_alphabetic) {
                self.i += 1;
            }
            let flags = &self.b[start..self.i];
            if !flags.contains(&b'x') || !self.eat(b" ") {
                return None;
            }
            // Arrays are not passed to programs; bash lists them all the same.
            plain = !flags.iter().any(|f| matches!(f, b'a' | b'A'));
        } else if !self.eat(b"export ") {
            return None;
        }
        let start = self.i;
        while self
            .b
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.i += 1;
        }
        let name = &self.b[start..self.i];
        if name.is_empty() || name[0].is_ascii_digit() {
            return None;
        }
        let name = OsString::from_vec(name.to_vec());
        if self.eat(b"\n") {
            return Some(None);
        }
        if !self.eat(b"=") {
            return None;
        }
        if !plain {
            // `(…)` of an array: skipped to its line's end, which bash
            // writes without a raw newline inside.
            while self.next()? != b'\n' {}
            return Some(None);
        }
        let value = if self.eat(b"$'") {
            self.ansi_c()?
        } else if self.eat(b"\"") {
            self.double_quoted()?
        } else {
            return None;
        };
        if !self.eat(b"\n") {
            return None;
        }
        Some(Some((name, OsString::from_vec(value))))
    }

    /// After `"`: up to the closing `"`.
    fn double_quoted(&mut self) -> Option<Vec<u8>> {
        let mut v = Vec::new();
        loop {
            match self.next()? {
                b'"' => return Some(v),
                b'\\' => match self.next()? {
                    c @ (b'"' | b'\\' | b'$' | b'`') => v.push(c),
                    c => {
                        v.push(b'\\');
                        v.push(c);
                    }
                },
                c => v.push(c),
            }
        }
    }

    /// After `$'`: up to the closing `'`, C escapes decoded.
    fn ansi_c(&mut self) -> Option<Vec<u8>> {
        let mut v = Vec::new();
        loop {
            match self.next()? {
                b'\'' => return Some(v),
                b'\\' => {
                    let c = self.next()?;
                    v.push(match c {
                        b'a' => 7,
                        b'b' => 8,
                        b'e' | b'E' => 27,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'v' => 11,
                        b'\\' | b'\'' | b'"' | b'?' => c,
                        b'0'..=b'7' => {
                            let mut n = u32::from(c - b'0');
                            for _ in 0..2 {
                                match self.b.get(self.i) {
                                    Some(d @ b'0'..=b'7') => {
                                        n = n * 8 + u32::from(d - b'0');
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            u8::try_from(n).ok()?
                        }
                        b'x' => {
                            let mut n = 0u32;
                            let mut digits = 0;
                            while digits < 2 {
                                match self.b.get(self.i).and_then(|d| (*d as char).to_digit(16)) {
                                    Some(d) => {
                                        n = n * 16 + d;
                                        self.i += 1;
                                        digits += 1;
                                    }
                                    None => break,
                                }
                            }
                            if digits == 0 {
                                return None;
                            }
                            n as u8
                        }
                        _ => return None,
                    });
                }
                c => v.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Option<Vec<(String, String)>> {
        parse(text.as_bytes()).map(|v| {
            v.into_iter()
                .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
                .collect()
        })
    }

    #[test]
    fn both_quotings_and_valueless_names_are_read() {
        let text = "declare -x A=$'x\\ny\\001z\"\\\\$`'\ndeclare -x B\ndeclare -rx C=\"1\"\n\
                    declare -x D=\"q\\\"\\$(touch x)\\\\\"\nexport E=\"\"\ndeclare -ax F=([0]=\"1\")\n";
        assert_eq!(
            pairs(text),
            Some(vec![
                ("A".into(), "x\ny\u{1}z\"\\$`".into()),
                ("C".into(), "1".into()),
                ("D".into(), "q\"$(touch x)\\".into()),
                ("E".into(), "".into()),
            ])
        );
    }

    #[test]
    fn a_multiline_double_quoted_value_is_one_value() {
        assert_eq!(
            pairs("declare -x M=\"a\nb\"\n"),
            Some(vec![("M".into(), "a\nb".into())])
        );
    }

    #[test]
    fn anything_else_is_not_a_record() {
        for bad in [
            "declare -x BASH_FUNC_ls%%=\"() { x; }\"\n",
            "declare -x 1A=\"x\"\n",
            "declare -- A=\"x\"\n",
            "A=x\n",
            "declare -x A=\"unterminated\n",
            "declare -x A=$'\\q'\n",
            "declare -x A=unquoted\n",
            "declare -x A=\"x\"",
        ] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(parse(b""), Some(vec![]));
    }

    /// Whatever a command writes into its record, reading it ends without
    /// a panic.
    #[test]
    fn any_bytes_are_read_or_refused() {
        let alphabet: &[u8] = b"declare -x export A=\"$'\\\n\0_1a(";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..200 {
            for _ in 0..100 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % 7 == 0 {
                            (seed >> 24) as u8
                        } else {
                            alphabet[(seed >> 32) as usize % alphabet.len()]
                        }
                    })
                    .collect();
                let _ = parse(&bytes);
            }
        }
        // Cut anywhere, a real listing is refused or read whole.
        let real = b"declare -x A=\"1\"\ndeclare -x B=$'\\n'\n";
        for cut in 0..real.len() {
            let _ = parse(&real[..cut]);
        }
    }

    /// What bash itself writes reads back as the values it was given.
    #[test]
    fn bash_s_own_output_reads_back() {
        let values = [
            "plain",
            "",
            "a b",
            "x\ny",
            "\u{1}\u{7f}",
            "q\"'$`\\",
            "é ü",
            "\t\r\u{1b}[0m",
        ];
        let mut cmd = std::process::Command::new("bash");
        cmd.env_clear().arg("-c").arg("export -p");
        for (i, v) in values.iter().enumerate() {
            cmd.env(format!("V{i}"), v);
        }
        for lang in ["C", "C.UTF-8"] {
            let out = cmd.env("LC_ALL", lang).output().unwrap();
            let got = parse(&out.stdout).expect("bash's export -p is read");
            for (i, v) in values.iter().enumerate() {
                let name = OsString::from(format!("V{i}"));
                let value = got.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
                assert_eq!(value, Some(OsString::from(v)), "{lang} V{i}");
            }
        }
    }
}
