//! Secrets never reach the model (README, "Secrets"): the values of secret variables
//! are masked in every text the model reads, as `[redacted NAME]`.
//!
//! A value is secret when its variable is named (`redact_env`, `--redact`)
//! or, with the automatic rule on, when its name says so ([`is_secret_name`]);
//! hosts add values they hold in no variable (`redact_values`). Values under
//! [`MIN_SECRET_BYTES`] bytes are never masked: they would mask ordinary text.
//!
//! What is masked is every piece of 8 bytes or more of a secret, not only
//! whole values: a value cut by head/tail truncation, a monitor's line limit
//! or a read boundary shows a prefix or a suffix, and that is masked too.
//! One Aho-Corasick automaton over every 8-byte window of every secret finds
//! them in one pass over the text shown (never over a whole output file);
//! overlapping and adjacent windows merge into one masked run. It is built
//! once per change of the secret set.
//!
//! A seat belt, not a vault: a value the command transforms (base64, split
//! with `cut`, one character per line) passes, and the output file on disk
//! keeps what the command wrote.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, MatchKind};

/// The shortest value masked, in bytes.
pub const MIN_SECRET_BYTES: usize = 8;

/// Whether a variable named `name` holds a secret by the automatic rule: its
/// name contains `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `APIKEY`,
/// `API_KEY`, `PRIVATE_KEY` or `CREDENTIAL`, or ends in `_KEY` or `_PAT`,
/// in any case.
///
/// ```
/// assert!(bashtools::is_secret_name("GITHUB_TOKEN"));
/// assert!(bashtools::is_secret_name("aws_secret_access_key"));
/// assert!(bashtools::is_secret_name("GH_PAT"));
/// assert!(!bashtools::is_secret_name("KEYBOARD"));
/// assert!(!bashtools::is_secret_name("PATH"));
/// ```
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const PARTS: [&str; 8] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "APIKEY",
        "API_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
    ];
    PARTS.iter().any(|p| upper.contains(p)) || upper.ends_with("_KEY") || upper.ends_with("_PAT")
}

/// The secret set of one set of tools, shared with what masks texts
/// outside the tools' own calls (end notifications, monitors); replaced
/// whole when a secret is added.
pub(crate) type Shared = std::sync::Arc<parking_lot::RwLock<std::sync::Arc<Secrets>>>;

/// A [`Shared`] holding `secrets`.
pub(crate) fn shared(secrets: Secrets) -> Shared {
    std::sync::Arc::new(parking_lot::RwLock::new(std::sync::Arc::new(secrets)))
}

/// A set of secrets and the automaton that finds their pieces.
#[derive(Debug, Default)]
pub(crate) struct Secrets {
    /// (name, value), values of [`MIN_SECRET_BYTES`] bytes or more.
    values: Vec<(String, Vec<u8>)>,
    /// Every 8-byte window of every value; pattern `i` belongs to
    /// `owner[i]`.
    finder: Option<AhoCorasick>,
    owner: Vec<usize>,
}

impl Secrets {
    /// The secrets among `pairs` (name, value): each value long enough,
    /// once.
    pub(crate) fn new(pairs: impl IntoIterator<Item = (String, Vec<u8>)>) -> Secrets {
        let mut values: Vec<(String, Vec<u8>)> = Vec::new();
        for (name, value) in pairs {
            if value.len() >= MIN_SECRET_BYTES && !values.iter().any(|(_, v)| *v == value) {
                values.push((name, value));
            }
        }
        let mut patterns: Vec<&[u8]> = Vec::new();
        let mut owner = Vec::new();
        for (i, (_, value)) in values.iter().enumerate() {
            for window in value.windows(MIN_SECRET_BYTES) {
                patterns.push(window);
                owner.push(i);
            }
        }
        let finder = (!patterns.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(&patterns)
                    .ok()
            })
            .flatten();
        Secrets {
            values,
            finder,
            owner,
        }
    }

    /// Whether there is nothing to mask.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    /// The values, with their names (to build a larger set from).
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
        self.values.iter().cloned()
    }

    /// `text` with every piece of 8 bytes or more of a secret shown as
    /// `[redacted NAME]`; borrowed when nothing was found.
    pub(crate) fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(finder) = &self.finder else {
            return Cow::Borrowed(text);
        };
        // Runs of bytes to mask, each with the secret it belongs to.
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for m in finder.find_overlapping_iter(text.as_bytes()) {
            let owner = self.owner[m.pattern().as_usize()];
            match runs.last_mut() {
                Some(last) if m.start() <= last.1 => last.1 = last.1.max(m.end()),
                _ => runs.push((m.start(), m.end(), owner)),
            }
        }
        if runs.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, owner) in runs {
            // Whole characters: a piece may cut one.
            let start = floor_char(text, start).max(at);
            let end = ceil_char(text, end);
            if end <= start {
                continue;
            }
            out.push_str(&text[at..start]);
            out.push_str(&format!("[redacted {}]", self.values[owner].0));
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Secrets {
        Secrets::new(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())),
        )
    }

    #[test]
    fn whole_values_and_pieces_are_masked() {
        let s = set(&[("GH_TOKEN", "ghp_abcdefghijklmnop"), ("PIN", "1234")]);
        assert_eq!(
            s.mask("token=ghp_abcdefghijklmnop!"),
            "token=[redacted GH_TOKEN]!"
        );
        assert_eq!(
            s.mask("a ghp_abcdefghijklmnop b ghp_abcdefghijklmnop"),
            "a [redacted GH_TOKEN] b [redacted GH_TOKEN]"
        );
        // Cut at the end (a head), at the start (a tail), in the middle.
        assert_eq!(s.mask("head ghp_abcdefg"), "head [redacted GH_TOKEN]");
        assert_eq!(s.mask("hijklmnop tail"), "[redacted GH_TOKEN] tail");
        assert_eq!(s.mask("x cdefghijkl y"), "x [redacted GH_TOKEN] y");
        // Under 8 bytes: never.
        assert_eq!(s.mask("pin 1234, ghp_abc"), "pin 1234, ghp_abc");
        assert!(matches!(s.mask("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_values_make_no_secret_and_characters_stay_whole() {
        assert!(set(&[("A_TOKEN", "short")]).is_empty());
        let s = set(&[("K_KEY", "ééééé")]); // 10 bytes
        assert_eq!(s.mask("[ééééé]"), "[[redacted K_KEY]]");
        assert_eq!(s.mask("xéééé"), "x[redacted K_KEY]");
    }

    #[test]
    fn two_secrets_side_by_side() {
        let s = set(&[("A_TOKEN", "aaaaaaaaaa"), ("B_TOKEN", "bbbbbbbbbb")]);
        assert_eq!(
            s.mask("aaaaaaaaaa bbbbbbbbbb"),
            "[redacted A_TOKEN] [redacted B_TOKEN]"
        );
    }

    #[test]
    fn the_name_rule() {
        for name in [
            "GITHUB_TOKEN",
            "npm_token",
            "DB_PASSWORD",
            "MYSQL_PASSWD",
            "OPENAI_APIKEY",
            "X_API_KEY",
            "SSH_PRIVATE_KEY",
            "GOOGLE_CREDENTIALS",
            "AWS_SECRET_ACCESS_KEY",
            "STRIPE_KEY",
            "GH_PAT",
            "client_secret",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD",
            "MONKEY",
            "PATTERN",
            "TOKENIZER_PATH_X",
        ] {
            let expected = name.contains("TOKEN");
            assert_eq!(is_secret_name(name), expected, "{name}");
        }
    }
}
