//! The allow-list gate checked against bash itself (issue 10): command lines are
//! generated from a grammar of bash, and every line `gate::check_allowed` allows is run
//! by a real `bash -c` whose `PATH` holds only recording stubs, in a throwaway
//! directory, with a time limit. The test fails when a stub records a command word (or
//! an executed file) that is not listed, or a forbidden variable that reached its
//! environment changed. A corpus of real one-liners (`tests/gate_corpus.txt`) is run
//! the same way.
//!
//! Builtins that run code (`eval`, `source`, `exec`, `command`, `builtin`, `enable`,
//! `compgen`, `alias`, `fc`) are not listed; they are disabled with `enable -n` before
//! the line runs, so that a line reaching one runs its stub instead and is seen.
//!
//! Seeded: `GATE_SEED` and `GATE_LINES` override the seed and the number of lines.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bashtools::gate::check_allowed;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

/// Words the generated lines may run: listed builtins and stubs.
const ALLOWED: &[&str] = &[
    "al",
    "be",
    "./al",
    "echo",
    "true",
    "false",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "read",
    "printf",
    "mapfile",
    "readarray",
    "unset",
    "let",
    "getopts",
    "wait",
    "jobs",
    "trap",
    "set",
    "shopt",
    "hash",
    "test",
    "[",
    "[[",
    ":",
    "cd",
];

/// Builtins that run code: not listed, disabled, and shadowed by a stub.
const DISABLED: &[&str] = &[
    "eval", "source", "exec", "command", "builtin", "compgen", "complete", "alias", "fc", "bind",
    "enable",
];

/// The variables the gate guards (its forbidden set), as the stubs look for them.
const FORBIDDEN: &[&str] = &[
    "PATH",
    "IFS",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "BASH_CMDS",
    "BASH_ALIASES",
    "EXECIGNORE",
    "POSIXLY_CORRECT",
    "BASH_COMPAT",
    "GCONV_PATH",
    "BASH_LOADABLES_PATH",
    "TEXTDOMAIN",
    "TEXTDOMAINDIR",
];
const FORBIDDEN_PREFIXES: &[&str] = &["LD_", "BASH_FUNC_"];

/// Allowed words of the corpus: real programs, stubbed.
const CORPUS_ALLOWED: &[&str] = &[
    "grep", "sed", "awk", "find", "sort", "uniq", "head", "tail", "wc", "cut", "tr", "cat", "echo",
    "printf", "git", "cargo", "ls", "test", "[", "[[", "true", "read", "export", "declare", "jobs",
    "trap", "set", "cd", "mapfile", "unset", "let", "xargs", "time", "wait", "hash", "fc",
    "getopts", "shopt",
];
const CORPUS_UNLISTED: &[&str] = &[
    "rm", "curl", "wget", "sh", "bash", "python3", "touch", "chmod", "dd", "nc", "ga",
];

/// A tiny deterministic generator (xorshift64*), so the test needs no dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

// ----- the grammar ------------------------------------------------------------------

const COMMAND_WORDS: &[&str] = &[
    "al",
    "be",
    "ga",
    "zu",
    "echo",
    "true",
    "./al",
    "./ga",
    "'a'l",
    "g\"a\"",
    "\\ga",
    "a\\l",
    "$'\\x67a'",
    "$'al'",
    "e''cho",
    "eval",
    "source",
    "exec",
    "command",
    "ls",
    "rm",
    ":",
    "\"$c\"",
    "$c",
    "g*",
    "{al,ga}",
    "g\\\na",
    "\"g\\\na\"",
    "'g\\\na'",
];

const LISTED_SPELLINGS: &[&str] = &[
    "al", "be", "echo", "true", "./al", "'a'l", "a\\l", "$'al'", "e''cho", ":", "\"b\"e", "a\\\nl",
];

const NAMES: &[&str] = &[
    "v",
    "x",
    "r",
    "PATH",
    "PA''TH",
    "P\\ATH",
    "\"PA\"TH",
    "'PATH'",
    "BASH_ENV",
    "BASH''_ENV",
    "IFS",
    "I\"\"FS",
    "SHELLOPTS",
    "SHELL''OPTS",
    "LD_PRELOAD",
    "$'PATH'",
    "ENV",
    "$n",
    "\"$n\"",
];

const VALUES: &[&str] = &[
    "p", ".", "./d", "/tmp", "ga", "$v", "\"$v\"", "'a b'", "0", "", "xtrace", "al",
];

struct Gen {
    rng: Rng,
}

impl Gen {
    fn line(&mut self) -> String {
        let mut s = String::new();
        if self.rng.chance(15) {
            // Plant a file that runs an unlisted stub if bash ever reads it.
            s.push_str("echo ga > p; ");
        }
        s + &self.list(0)
    }

    fn list(&mut self, depth: usize) -> String {
        let mut s = self.and_or(depth);
        for _ in 0..self.rng.below(3) {
            let sep = self.rng.pick(&["; ", " && ", " || ", "\n", " & ", ";"]);
            s.push_str(sep);
            s.push_str(&self.and_or(depth));
        }
        s
    }

    fn and_or(&mut self, depth: usize) -> String {
        let mut s = self.command(depth);
        if self.rng.chance(15) {
            s.push_str(self.rng.pick(&[" | ", " |& "]));
            s.push_str(&self.command(depth));
        }
        if self.rng.chance(5) {
            s = format!("! {s}");
        }
        s
    }

    fn command(&mut self, depth: usize) -> String {
        let choice = if depth >= 3 { 0 } else { self.rng.below(14) };
        let d = depth + 1;
        match choice {
            0..=4 => self.simple(depth),
            5 | 6 => self.declaration(depth),
            7 => format!("( {} )", self.list(d)),
            8 => format!("{{ {}; }}", self.list(d)),
            9 => format!(
                "if {}; then {}; else {}; fi",
                self.list(d),
                self.list(d),
                self.list(d)
            ),
            10 => {
                let var = self.rng.pick(&["i", "PATH", "r", "IFS"]);
                format!(
                    "for {var} in {} {}; do {}; done",
                    self.word(d),
                    self.word(d),
                    self.list(d)
                )
            }
            11 => format!(
                "while false; do {}; done; until true; do {}; done",
                self.list(d),
                self.list(d)
            ),
            12 => format!(
                "case {} in {}) {};; *) {};; esac",
                self.word(d),
                self.word(d),
                self.list(d),
                self.list(d)
            ),
            _ => format!("(( {} ))", self.arith(d)),
        }
    }

    fn simple(&mut self, depth: usize) -> String {
        let mut s = String::new();
        if self.rng.chance(20) {
            s.push_str(&format!("{}={} ", self.name(), self.value(depth)));
        }
        s.push_str(self.command_word());
        for _ in 0..self.rng.below(3) {
            s.push(' ');
            s.push_str(&self.word(depth + 1));
        }
        if self.rng.chance(25) {
            s.push(' ');
            s.push_str(&self.redirection(depth + 1));
        }
        s
    }

    /// Mostly listed words, spelled in various ways, so that most lines get to run.
    fn command_word(&mut self) -> &'static str {
        if self.rng.chance(80) {
            self.rng.pick(LISTED_SPELLINGS)
        } else {
            self.rng.pick(COMMAND_WORDS)
        }
    }

    fn name(&mut self) -> &'static str {
        if self.rng.chance(50) {
            self.rng.pick(&["v", "x", "'v'", "v\\x", "\"x\"", "a[1]"])
        } else {
            self.rng.pick(NAMES)
        }
    }

    fn redirection(&mut self, depth: usize) -> String {
        match self.rng.below(8) {
            0 => "> f".into(),
            1 => ">& f".into(),
            2 => "2>&1".into(),
            3 => format!(">& {}", self.word(depth)),
            4 => format!("< {}", self.word(depth)),
            5 => format!("<<< {}", self.word(depth)),
            6 => format!("<<E\nbody {}\nE\n", self.word(depth)),
            _ => "<<'E'\n$(ga)\nE\n".into(),
        }
    }

    fn declaration(&mut self, depth: usize) -> String {
        let name = self.name();
        let value = self.value(depth);
        let builtin = self.rng.pick(&[
            "export",
            "declare -x",
            "declare",
            "declare -n",
            "typeset",
            "readonly",
            "local",
            "export -n",
        ]);
        match self.rng.below(16) {
            0..=4 => format!("{builtin} {name}={value}"),
            5 => match self.rng.below(4) {
                0 => format!("IFS={value} read {name} < p"),
                1 => format!("read -d $'\\0' {name} < p"),
                2 => format!("unset {name}[2] {name}[x]"),
                _ => format!("read {name} < p"),
            },
            6 => format!("printf -v {name} %s {value}"),
            7 => format!("mapfile -t {name} < p"),
            8 => format!("unset {name}"),
            9 => format!("let {name}=1"),
            10 => format!("getopts ab {name}"),
            11 => format!("declare -n r; r={name}; r={value}"),
            12 => format!("jobs -x {} x", self.command_word()),
            13 => format!("trap '{}' EXIT", self.command_word()),
            14 => format!("mapfile -C {} -c 1 a < p", self.command_word()),
            _ => format!("{builtin} {name}"),
        }
    }

    fn value(&mut self, depth: usize) -> String {
        if depth < 3 && self.rng.chance(20) {
            self.word(depth + 1)
        } else {
            self.rng.pick(VALUES).to_string()
        }
    }

    fn arith(&mut self, depth: usize) -> String {
        let name = self.rng.pick(&["i", "PATH", "IFS", "a[1]", "a[PATH=0]"]);
        match self.rng.below(4) {
            0 => format!("{name} = 1"),
            1 => format!("{name} + $(({}))", self.rng.below(9)),
            2 => format!("$({}) + 1", self.simple(depth)),
            _ => format!("{name}++"),
        }
    }

    fn word(&mut self, depth: usize) -> String {
        let deep = depth >= 4;
        match if deep {
            self.rng.below(6)
        } else {
            self.rng.below(19)
        } {
            0 => "x".into(),
            1 => "'q r'".into(),
            2 => "\"d $v\"".into(),
            3 => "$v".into(),
            4 => "\\;".into(),
            5 => "a[1]".into(),
            6 => format!("$({})", self.list(depth + 1)),
            7 => format!("`{}`", self.simple(depth + 1)),
            8 => format!("<({})", self.simple(depth + 1)),
            9 => format!("\"$({})\"", self.simple(depth + 1)),
            10 => format!("$(({}))", self.arith(depth + 1)),
            11 => format!("${{v:-{}}}", self.word(depth + 1)),
            12 => format!("${{a[{}]}}", self.word(depth + 1)),
            13 => "$'\\x67a'".into(),
            14 => "*".into(),
            15 => format!("${{{}:=p}}", self.rng.pick(&["BASH_ENV", "v", "IFS"])),
            16 => self
                .rng
                .pick(&["$\"ga\"", "${v:-$\"ga\"}", "$(( $\"1\" ))", "a[$\"x y\"]=b"])
                .into(),
            17 => format!("'{}'", self.simple(depth + 1).replace('\'', "")),
            _ => format!("{}{}", self.word(depth + 1), self.word(depth + 1)),
        }
    }
}

// ----- running a line under bash ----------------------------------------------------

/// A throwaway directory with the stubs, removed on drop.
pub(crate) struct Sandbox {
    root: PathBuf,
    bin: PathBuf,
    log: PathBuf,
    pub(crate) lines_run: usize,
    /// The builtins that run code are disabled (and stubbed) before each line.
    disable: bool,
}

impl Sandbox {
    pub(crate) fn new(tag: &str, stubs: &[&str]) -> Sandbox {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let root = std::env::temp_dir().join(format!(
            "bashtools-gate-{tag}-{}-{nanos}",
            std::process::id()
        ));
        let bin = root.join("bin");
        fs::create_dir_all(&bin).unwrap();
        let log = root.join("log");
        let sandbox = Sandbox {
            root,
            bin,
            log,
            lines_run: 0,
            disable: true,
        };
        for name in stubs.iter().chain(DISABLED) {
            sandbox.write_stub(&sandbox.bin.join(name));
        }
        sandbox
    }

    /// A sandbox whose lines keep every builtin, with the real programs
    /// `real` (found in `/usr/bin` or `/bin`) beside the stubs: what runs
    /// other commands runs them for real, and the stubs record what ran.
    pub(crate) fn with_programs(tag: &str, stubs: &[&str], real: &[&str]) -> Sandbox {
        let mut sandbox = Sandbox::new(tag, stubs);
        sandbox.disable = false;
        for name in DISABLED {
            let _ = fs::remove_file(sandbox.bin.join(name));
        }
        for name in real {
            let found = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.exists());
            if let Some(program) = found {
                std::os::unix::fs::symlink(program, sandbox.bin.join(name)).unwrap();
            }
        }
        sandbox
    }

    /// The files the stubs record as run, by name.
    pub(crate) fn ran(&self, records: &[String]) -> Vec<String> {
        let bin = format!("{}/", self.bin.display());
        records
            .iter()
            .filter_map(|r| r.strip_prefix("RUN\t"))
            .map(|f| f.strip_prefix(&bin).unwrap_or(f).to_string())
            .collect()
    }

    /// A stub records the file it was run as and every forbidden variable of its
    /// initial environment, using builtins only (`PATH` holds nothing else). `-p`
    /// keeps the stub itself from reading `BASH_ENV` or `SHELLOPTS`.
    fn write_stub(&self, path: &Path) {
        let pattern: Vec<String> = FORBIDDEN
            .iter()
            .map(|v| format!("{v}=*"))
            .chain(FORBIDDEN_PREFIXES.iter().map(|p| format!("{p}*")))
            .collect();
        let script = format!(
            "#!/bin/bash -p\n\
             exec 3>>'{log}'\n\
             printf 'RUN\\t%s\\n' \"$0\" >&3\n\
             while IFS= read -r -d '' kv; do\n\
             case $kv in {pattern}) printf 'ENV\\t%s\\n' \"$kv\" >&3;; esac\n\
             done < /proc/$$/environ\n",
            log = self.log.display(),
            pattern = pattern.join("|"),
        );
        fs::write(path, script).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Runs `line` as the crate does (`bash -c`), in a fresh directory holding stubs
    /// `./al` and `./ga`. Returns what the stubs recorded, or None when bash is missing.
    pub(crate) fn run(&mut self, line: &str) -> Vec<String> {
        self.run_after("", line)
    }

    /// [`run`](Self::run), with `before` run first in the same bash (a
    /// state the line finds, such as an `IFS`).
    pub(crate) fn run_after(&mut self, before: &str, line: &str) -> Vec<String> {
        self.lines_run += 1;
        let dir = self.root.join(format!("w{}", self.lines_run));
        fs::create_dir_all(dir.join("d")).unwrap();
        for name in ["al", "ga"] {
            let stub = self.bin.join(name);
            if stub.exists() {
                fs::hard_link(&stub, dir.join(name)).unwrap();
                fs::hard_link(&stub, dir.join("d").join(name)).unwrap();
            }
        }
        fs::write(&self.log, "").unwrap();
        let prelude = match self.disable {
            true => format!("enable -n {}\n{before}", DISABLED.join(" ")),
            false => before.to_string(),
        };
        let mut child = Command::new("/bin/bash")
            .arg("-c")
            .arg(prelude + line)
            .current_dir(&dir)
            .env_clear()
            .env("PATH", &self.bin)
            .env("HOME", &dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("bash starts");
        let group = Pid::from_raw(child.id() as i32);
        if child
            .wait_timeout(Duration::from_secs(10))
            .unwrap()
            .is_none()
        {
            eprintln!("gate differential: line timed out, killed: {line:?}");
        }
        // Background stubs of the line may still be writing: wait for the group to
        // end, then make sure it has.
        let deadline = Instant::now() + Duration::from_secs(10);
        while killpg(group, None).is_ok() && Instant::now() < deadline {
            let _ = child.try_wait();
            std::thread::yield_now();
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = child.wait();
        let _ = fs::remove_dir_all(&dir);
        let file = fs::File::open(&self.log).unwrap();
        BufReader::new(file).lines().map_while(Result::ok).collect()
    }

    /// What in a stub's record breaks the contract for `allowed`.
    fn violations(&self, records: &[String], allowed: &[&str]) -> Vec<String> {
        let bin = self.bin.display().to_string();
        let mut bad = Vec::new();
        // Every stub records its PATH: one that ran without means PATH was unset.
        let runs = records.iter().filter(|r| r.starts_with("RUN\t")).count();
        let paths = records
            .iter()
            .filter(|r| r.starts_with("ENV\tPATH="))
            .count();
        if paths < runs {
            bad.push(format!(
                "{} of {runs} programs ran without PATH",
                runs - paths
            ));
        }
        for record in records {
            if let Some(file) = record.strip_prefix("RUN\t") {
                let word = file.strip_prefix(&format!("{bin}/")).unwrap_or(file);
                if !allowed.contains(&word) {
                    bad.push(format!("ran {file}"));
                }
            } else if let Some(kv) = record.strip_prefix("ENV\t") {
                if kv != format!("PATH={bin}") {
                    bad.push(format!("environment held {kv}"));
                }
            }
        }
        bad
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

pub(crate) fn bash_usable() -> bool {
    let ok = Path::new("/bin/bash").exists() && Path::new("/proc/self/environ").exists();
    if !ok {
        eprintln!("gate differential: /bin/bash or /proc/self/environ missing; nothing run");
    }
    ok
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_lines_the_gate_allows_run_only_listed_commands() {
    let seed = env_number("GATE_SEED", 0x1DEA_5EED);
    let lines = env_number("GATE_LINES", 4000) as usize;
    let mut gen = Gen { rng: Rng(seed | 1) };
    let mut sandbox = Sandbox::new("gen", &["al", "be", "ga", "zu", "ls", "rm", "sh"]);
    let usable = bash_usable();
    let (mut allowed, mut counterexamples) = (0, Vec::new());
    let started = Instant::now();
    for _ in 0..lines {
        let line = gen.line();
        if check_allowed(&line, ALLOWED).is_err() {
            continue;
        }
        allowed += 1;
        if !usable {
            continue;
        }
        let records = sandbox.run(&line);
        let bad = sandbox.violations(&records, ALLOWED);
        if !bad.is_empty() {
            counterexamples.push(format!("{line:?}: {}", bad.join(", ")));
        }
    }
    eprintln!(
        "gate differential: seed {seed:#x}: {lines} lines generated, {allowed} allowed, \
         {} run, {} counterexamples, {:.1?}",
        sandbox.lines_run,
        counterexamples.len(),
        started.elapsed()
    );
    assert!(
        allowed > lines / 20,
        "the grammar hardly produces allowed lines"
    );
    assert!(
        counterexamples.is_empty(),
        "lines the gate allowed ran what is not listed:\n{}",
        counterexamples.join("\n")
    );
}

/// Every listed builtin that reads options, given a word that expands to options or to
/// a trap action and its signal: each combination the gate allows must run only listed
/// commands and leave the forbidden variables alone (`./al` at the end records them).
#[test]
fn words_that_expand_to_options_run_only_listed_commands() {
    let values = [
        "-x ga",
        "ga EXIT",
        "-p PATH",
        "-vPATH ga",
        "-p ./ga al",
        "-a PATH",
        "-n r",
        "-- ga EXIT",
        "-k",
        "-C ga -c 1 a",
        "-o posix",
        "ab PATH",
        "-l -s al=ga",
        "-o history -H",
        "foo -a PATH",
        "1 -C ga -c 1",
        "default -C ga",
    ];
    let builtins = [
        "jobs",
        "trap",
        "wait",
        "printf",
        "hash",
        "read",
        "set",
        "declare",
        "export",
        "mapfile",
        "shopt",
        "local",
        "readonly",
        "unset",
        "getopts ab",
        "getopts",
        "fc",
    ];
    // Where an option, an option's argument or an operand stands.
    let words = [
        "$o",
        "\"$o\"",
        "$o x",
        "-- $o",
        "-p $o x",
        "-n $o x",
        "-o $o",
        "\"${a[@]}\"",
    ];
    let mut sandbox = Sandbox::new("options", &["al", "be", "ga"]);
    let usable = bash_usable();
    let (mut total, mut allowed, mut counterexamples) = (0, 0, Vec::new());
    for value in values {
        for builtin in builtins {
            for word in words {
                total += 1;
                let line = format!(
                    "o='{value}'; a=({value}); true & {builtin} {word} < /dev/null; al; ./al"
                );
                if check_allowed(&line, ALLOWED).is_err() {
                    continue;
                }
                allowed += 1;
                if !usable {
                    continue;
                }
                let records = sandbox.run(&line);
                let bad = sandbox.violations(&records, ALLOWED);
                if !bad.is_empty() {
                    counterexamples.push(format!("{line:?}: {}", bad.join(", ")));
                }
            }
        }
    }
    eprintln!("gate options: {total} lines, {allowed} allowed and run");
    assert!(
        allowed > total / 20,
        "most forms are refused: the test shows little"
    );
    assert!(
        counterexamples.is_empty(),
        "lines the gate allowed ran what is not listed:\n{}",
        counterexamples.join("\n")
    );
}

#[test]
fn corpus_lines_run_only_listed_commands() {
    let corpus = include_str!("../gate_corpus.txt");
    let stubs: Vec<&str> = CORPUS_ALLOWED
        .iter()
        .chain(CORPUS_UNLISTED)
        .copied()
        .collect();
    let mut sandbox = Sandbox::new("corpus", &stubs);
    let usable = bash_usable();
    let (mut total, mut allowed, mut refused_attacks, mut counterexamples) = (0, 0, 0, Vec::new());
    for entry in corpus.lines() {
        if entry.trim().is_empty() || entry.starts_with("## ") {
            continue;
        }
        total += 1;
        // `\n` in an entry stands for a newline; an entry marked `!` must be refused.
        let attack = entry.starts_with("! ");
        let line = entry.trim_start_matches("! ").replace("\\n", "\n");
        if check_allowed(&line, CORPUS_ALLOWED).is_err() {
            refused_attacks += usize::from(attack);
            continue;
        }
        allowed += 1;
        if attack {
            counterexamples.push(format!("{line:?}: allowed, but marked as an attack"));
        }
        if !usable {
            continue;
        }
        let records = sandbox.run(&line);
        let bad = sandbox.violations(&records, CORPUS_ALLOWED);
        if !bad.is_empty() {
            counterexamples.push(format!("{line:?}: {}", bad.join(", ")));
        }
    }
    eprintln!(
        "gate corpus: {total} lines, {allowed} allowed, {} run, {refused_attacks} attacks \
         refused, {} counterexamples",
        sandbox.lines_run,
        counterexamples.len()
    );
    assert!(allowed > total / 2, "the corpus is mostly ordinary lines");
    assert!(
        counterexamples.is_empty(),
        "corpus lines went wrong:\n{}",
        counterexamples.join("\n")
    );
}

/// What an `IFS` the line finds can do to the gate's reading (issue 33,
/// item 5): the corpus and generated lines the gate accepts, run under an
/// `IFS` of blanks, nothing, `/`, letters and `-`. bash splits only the
/// results of unquoted expansions on `IFS`, never a literal word, and the
/// gate already reads every unquoted expansion as splitting anywhere: no
/// `IFS` makes an accepted line run what is not listed. What it can change
/// is how `read` splits its input, which a prefix `IFS=` before `read`
/// does for that `read` alone (accepted); a standalone `IFS=x` stays
/// refused, since it would hold for the rest of the line and for the
/// host's own script run after it.
#[test]
fn no_ifs_the_line_finds_changes_what_it_runs() {
    let corpus = include_str!("../gate_corpus.txt");
    let stubs: Vec<&str> = CORPUS_ALLOWED
        .iter()
        .chain(CORPUS_UNLISTED)
        .copied()
        .collect();
    let mut lines: Vec<(String, &[&str])> = corpus
        .lines()
        .filter(|e| !e.trim().is_empty() && !e.starts_with("## ") && !e.starts_with("! "))
        .map(|e| (e.replace("\\n", "\n"), CORPUS_ALLOWED))
        .filter(|(l, allowed)| check_allowed(l, allowed).is_ok())
        .collect();
    let mut gen = Gen {
        rng: Rng(0x1F5 | 1),
    };
    lines.truncate(100);
    while lines.len() < 150 {
        let line = gen.line();
        if check_allowed(&line, ALLOWED).is_ok() {
            lines.push((line, ALLOWED));
        }
    }
    let all_stubs: Vec<&str> = stubs
        .iter()
        .chain(["al", "be", "ga", "zu", "sh"].iter())
        .copied()
        .collect();
    let mut sandbox = Sandbox::new("ifs", &all_stubs);
    if !bash_usable() {
        return;
    }
    let mut counterexamples = Vec::new();
    for ifs in [
        "IFS=' '",
        "IFS=''",
        "IFS=/",
        "IFS=aeiou",
        "IFS=-",
        "IFS='=l'",
    ] {
        for (line, allowed) in &lines {
            let records = sandbox.run_after(&format!("{ifs}\n"), line);
            let bad = sandbox.violations(&records, allowed);
            if !bad.is_empty() {
                counterexamples.push(format!("{ifs}: {line:?}: {}", bad.join(", ")));
            }
        }
    }
    eprintln!(
        "gate under another IFS: {} lines x 6 values, {} counterexamples",
        lines.len(),
        counterexamples.len()
    );
    assert!(
        counterexamples.is_empty(),
        "an IFS changed what an accepted line runs:\n{}",
        counterexamples.join("\n")
    );
}

#[test]
fn the_harness_sees_an_unlisted_command_and_a_changed_variable() {
    if !bash_usable() {
        return;
    }
    let mut sandbox = Sandbox::new("self", &["al", "ga"]);
    let allowed = &["al", "export"];
    let unlisted = sandbox.run("al; ga");
    assert_eq!(
        sandbox.violations(&unlisted, allowed).len(),
        1,
        "{unlisted:?}"
    );
    let from_cwd = sandbox.run("./ga");
    assert_eq!(
        sandbox.violations(&from_cwd, allowed).len(),
        1,
        "{from_cwd:?}"
    );
    let changed = sandbox.run("export BASH_ENV=p; al");
    let bad = sandbox.violations(&changed, allowed);
    assert_eq!(bad, ["environment held BASH_ENV=p"], "{changed:?}");
    let disabled = sandbox.run("eval al");
    assert_eq!(
        sandbox.violations(&disabled, allowed).len(),
        1,
        "{disabled:?}"
    );
    let background = sandbox.run("al & ga &");
    assert_eq!(
        sandbox.violations(&background, allowed).len(),
        1,
        "{background:?}"
    );
    let unset = sandbox.run("PATH=; unset PATH; ./al");
    let bad = sandbox.violations(&unset, &["./al"]);
    assert_eq!(bad, ["1 of 1 programs ran without PATH"], "{unset:?}");
    let fine = sandbox.run("al");
    assert!(sandbox.violations(&fine, allowed).is_empty(), "{fine:?}");
}
