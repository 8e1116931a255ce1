//! The persisted environment (`persist_environment`): what a session's
//! foreground commands exported (`Caller::session`, by default the
//! recipient) carries to its next commands.
//!
//! A command's record lists the variables it ended with exported
//! (`os/bash/exports.rs`). Against the environment every command starts from
//! (the host's and the configured one: [`base_environment`]), what differs
//! is the session's carried environment — set or unset — and nothing
//! else: a variable no command changed stays the host's. Values are data
//! from start to end: the next command gets them as environment entries.
//!
//! Not carried: what bash itself changes at every start (`SHLVL`, `PWD`,
//! `OLDPWD`, `_`), the crate's own marks, functions (never listed), what
//! changes how bash starts (`SHAPES_BASH`, with a note), and —
//! under an allow-list — a variable the gate refuses to assign, and what
//! passes 64 KiB or 256 entries; each of the last two with a note in the
//! result.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};

use super::core::{Carried, Core, Kept};
use super::types::NotKept;
use crate::config::defaults::{CARRIED_ENTRIES_LIMIT, CARRIED_ENVIRONMENT_LIMIT};
use crate::os::bash::lastdir::Exports;
use crate::os::bash::spawn::base_environment;
use crate::os::process::is_internal;

/// Names bash sets itself in every shell: never a command's change.
const BASH_OWN: [&str; 4] = ["SHLVL", "PWD", "OLDPWD", "_"];

/// Names that change how bash itself starts: options set before the first
/// word (`SHELLOPTS` can hold `noexec`, `BASHOPTS` `extdebug`), POSIX mode
/// (which skips the startup file that records a command's end), and the
/// startup files themselves. Carried, one command could change how every
/// later one starts — or stop them recording anything, for good. Never
/// carried, allow-list or not.
const SHAPES_BASH: [&str; 5] = [
    "SHELLOPTS",
    "BASHOPTS",
    "POSIXLY_CORRECT",
    "BASH_ENV",
    "ENV",
];

impl Core {
    /// The carried environment of `session`, for its next command.
    pub(crate) fn carried_for(&self, session: &str) -> Vec<(OsString, Option<OsString>)> {
        if !self.config.persist_environment {
            return Vec::new();
        }
        self.carried
            .lock()
            .get(session)
            .map(|c| {
                c.carried
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A foreground command of `session` ended with `listing` (bash's
    /// `export -p`): its changes become the session's carried
    /// environment. Returns what was not kept, and why.
    pub(crate) fn keep_exports(&self, session: &str, listed: Exports) -> Vec<NotKept> {
        if let Some(k) = self.carried.lock().get(session) {
            if k.exports == listed {
                return k.not_kept.clone();
            }
        }
        // Not bash's listing (a program wrote to the record too): nothing
        // is known of the command's end, and nothing changes.
        let Some(exports) = crate::os::bash::exports::parse(&listed.listing) else {
            return Vec::new();
        };
        let base: HashMap<OsString, OsString> =
            base_environment(&self.config).into_iter().collect();
        let mut kept = self.carried.lock();
        let before = kept
            .get(session)
            .map(|k| k.carried.clone())
            .unwrap_or_default();
        let ended = Ended {
            exports,
            unknown: &listed.too_long,
            whole: listed.whole,
        };
        let (carried, mut not_kept) = carry(&base, &before, ended, self.config.gated);
        // What it exported that is secret is masked from now on.
        self.learn_secrets(
            carried
                .iter()
                .filter_map(|(k, v)| Some((k.as_os_str(), v.as_deref()?))),
        );
        // Too long to read: not kept, and said so by name.
        let too_long = listed.too_long.iter().cloned().map(NotKept::TooLarge);
        not_kept.splice(0..0, too_long);
        if !listed.whole {
            // First: the notes past the first few are only counted.
            not_kept.insert(0, NotKept::Unread);
        }
        kept.insert(
            session.to_string(),
            Kept {
                carried,
                exports: listed,
                not_kept: not_kept.clone(),
            },
        );
        not_kept
    }
}

/// What a command's record says it ended with.
struct Ended<'a> {
    /// The variables read from its listing.
    exports: Vec<(OsString, OsString)>,
    /// Variables it listed that could not be read (too long): neither set
    /// nor unset as far as the carried environment goes.
    unknown: &'a [OsString],
    /// Whether the listing is whole; if not, a variable missing from it is
    /// unknown too, not unset.
    whole: bool,
}

/// The carried environment after a command that started from `base` with
/// `before` carried and ended as `ended` says; `gated`: under an
/// allow-list.
fn carry(
    base: &HashMap<OsString, OsString>,
    before: &Carried,
    ended: Ended<'_>,
    gated: bool,
) -> (Carried, Vec<NotKept>) {
    let Ended {
        exports,
        unknown,
        whole,
    } = ended;
    let skip = |name: &OsStr| {
        BASH_OWN.iter().any(|n| name == *n)
            || is_internal(name)
            || name.as_encoded_bytes().starts_with(b"BASH_FUNC_")
    };
    // What the command started with, and what it ended with.
    let start = |name: &OsStr| -> Option<OsString> {
        match before.get(name) {
            Some(v) => v.clone(),
            None => base.get(name).cloned(),
        }
    };
    let ended: BTreeMap<OsString, OsString> =
        exports.into_iter().filter(|(k, _)| !skip(k)).collect();
    let mut changes: Carried = BTreeMap::new();
    for (name, value) in &ended {
        if base.get(name) != Some(value) {
            changes.insert(name.clone(), Some(value.clone()));
        }
    }
    // Missing from the listing: unset — unless the listing cannot say.
    let known_missing = |name: &OsString| whole && !unknown.contains(name);
    for name in base.keys().filter(|k| !skip(k)) {
        if !ended.contains_key(name) && known_missing(name) {
            changes.insert(name.clone(), None);
        }
    }
    // What the listing cannot say stays as it was before the command.
    for (name, value) in before {
        if !ended.contains_key(name) && !known_missing(name) {
            changes.insert(name.clone(), value.clone());
        }
    }
    let mut next = Carried::new();
    let mut not_kept = Vec::new();
    let mut size = 0usize;
    for (name, value) in changes {
        let changed_now = start(&name) != value;
        if SHAPES_BASH.iter().any(|n| name == *n) {
            if changed_now {
                not_kept.push(NotKept::ShapesBash(name));
            }
            continue;
        }
        if gated && crate::gate::changes_what_runs(&name.to_string_lossy()) {
            // Never carried under an allow-list; said only when this
            // command changed it.
            if changed_now {
                not_kept.push(NotKept::ChangesWhatRuns(name));
            }
            continue;
        }
        let bytes = name.len() + value.as_ref().map_or(0, |v| v.len());
        if value.is_some() && size + bytes > CARRIED_ENVIRONMENT_LIMIT {
            not_kept.push(NotKept::TooLarge(name));
            continue;
        }
        if next.len() >= CARRIED_ENTRIES_LIMIT {
            not_kept.push(NotKept::TooMany(name));
            continue;
        }
        size += bytes;
        next.insert(name, value);
    }
    (next, not_kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> OsString {
        OsString::from(s)
    }

    fn base() -> HashMap<OsString, OsString> {
        [
            ("HOME", "/root"),
            ("PATH", "/bin"),
            ("SHLVL", "0"),
            ("TERM", "dumb"),
        ]
        .into_iter()
        .map(|(k, v)| (os(k), os(v)))
        .collect()
    }

    fn exports(pairs: &[(&str, &str)]) -> Ended<'static> {
        Ended {
            exports: pairs.iter().map(|(k, v)| (os(k), os(v))).collect(),
            unknown: &[],
            whole: true,
        }
    }

    #[test]
    fn what_a_listing_cannot_say_is_neither_unset_nor_dropped() {
        let before: Carried = [(os("A"), Some(os("1"))), (os("Z"), Some(os("26")))].into();
        // Cut after HOME: PATH, TERM (the host's) and Z (carried) are
        // unknown, and stay; A is listed, changed.
        let cut = Ended {
            whole: false,
            ..exports(&[("A", "2"), ("HOME", "/root")])
        };
        let (next, _) = carry(&base(), &before, cut, false);
        let want: Carried = [(os("A"), Some(os("2"))), (os("Z"), Some(os("26")))].into();
        assert_eq!(next, want);
        // Whole, but TERM's line too long to read: TERM is not unset, while
        // PATH, missing, is.
        let unknown = [os("TERM")];
        let listed = Ended {
            unknown: &unknown,
            ..exports(&[("HOME", "/root")])
        };
        let (next, _) = carry(&base(), &Carried::new(), listed, false);
        assert_eq!(next, [(os("PATH"), None)].into());
    }

    #[test]
    fn what_a_command_set_or_unset_is_carried_and_nothing_else() {
        let (next, notes) = carry(
            &base(),
            &Carried::new(),
            exports(&[
                ("HOME", "/root"),
                ("PATH", "/bin"),
                ("SHLVL", "1"),
                ("A", "$(touch x)"),
                ("PWD", "/x"),
            ]),
            false,
        );
        assert!(notes.is_empty());
        // TERM was unset; A set; SHLVL and PWD are bash's own.
        let want: Carried = [(os("A"), Some(os("$(touch x)"))), (os("TERM"), None)].into();
        assert_eq!(next, want);
    }

    #[test]
    fn a_carried_variable_stays_until_a_command_changes_it() {
        let before: Carried = [(os("A"), Some(os("1")))].into();
        // The next command started with A=1 and left it.
        let all = [
            ("HOME", "/root"),
            ("PATH", "/bin"),
            ("TERM", "dumb"),
            ("A", "1"),
        ];
        let (next, _) = carry(&base(), &before, exports(&all), false);
        assert_eq!(next, before);
        // Then one unsets it: back to the host's (nothing carried).
        let (next, _) = carry(&base(), &before, exports(&all[..3]), false);
        assert!(next.is_empty(), "{next:?}");
    }

    #[test]
    fn under_an_allow_list_what_changes_what_runs_is_not_kept() {
        let (next, notes) = carry(
            &base(),
            &Carried::new(),
            exports(&[
                ("HOME", "/root"),
                ("PATH", "/evil"),
                ("TERM", "dumb"),
                ("LD_PRELOAD", "/x.so"),
                ("B", "2"),
            ]),
            true,
        );
        assert_eq!(next, [(os("B"), Some(os("2")))].into());
        assert_eq!(
            notes,
            vec![
                NotKept::ChangesWhatRuns(os("LD_PRELOAD")),
                NotKept::ChangesWhatRuns(os("PATH"))
            ]
        );
        // Without one, the same is carried.
        let (next, _) = carry(
            &base(),
            &Carried::new(),
            exports(&[
                ("HOME", "/root"),
                ("PATH", "/venv/bin:/bin"),
                ("TERM", "dumb"),
            ]),
            false,
        );
        assert_eq!(next, [(os("PATH"), Some(os("/venv/bin:/bin")))].into());
    }

    #[test]
    fn past_64_kib_a_variable_is_not_kept() {
        let big = "x".repeat(40 << 10);
        let all = [
            ("HOME", "/root"),
            ("PATH", "/bin"),
            ("TERM", "dumb"),
            ("A", big.as_str()),
            ("B", big.as_str()),
            ("C", "small"),
        ];
        let (next, notes) = carry(&base(), &Carried::new(), exports(&all), false);
        assert_eq!(notes, vec![NotKept::TooLarge(os("B"))]);
        assert!(
            next.contains_key(&os("A")) && next.contains_key(&os("C")),
            "{:?}",
            next.keys()
        );
    }
}
