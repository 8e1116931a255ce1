#!/usr/bin/env python3
"""Builds the corpora of real shell lines that `measure.py` judges.

    corpus.py ROOT OUT

ROOT holds Debian packages unpacked with `dpkg -x` (and their maintainer
scripts under ROOT/DEBIAN-*), and the source of the shell parser mvdan/sh
(package golang-mvdan-sh-dev). OUT gets one JSON string per line in:

- examples.jsonl: the command lines in the EXAMPLES sections of the man pages
  (verbatim blocks and lines after a `$ ` prompt), at most 20 per program;
- scripts.jsonl: single lines of the shell scripts (maintainer scripts too),
  each line alone, in a seeded sample of at most 30 000;
- mvdan.jsonl: the programs in mvdan/sh's interpreter tests.
"""
import collections, gzip, json, os, random, re, sys

ROOT, OUT = sys.argv[1], sys.argv[2]

ESCAPES = [(r'\(aq', "'"), (r'\(dq', '"'), (r'\(ga', '`'), (r'\(ti', '~'), (r'\(ha', '^'),
           (r'\(rs', '\\'), (r'\(em', '--'), (r'\(en', '-'), (r'\(bu', ''), (r'\*(C`', '"'),
           (r"\*(C'", '"'), (r'\-', '-'), (r'\&', ''), (r'\ ', ' '), (r'\~', ' '), (r'\|', ''),
           (r'\^', ''), (r'\e', '\\'), (r'\\', '\\')]
FONT = re.compile(r'\\f(\[[^\]]*\]|\(..|.)')


def unroff(s):
    s = re.sub(r'\\s[+-]?\d', '', FONT.sub('', s))
    for a, b in ESCAPES:
        s = s.replace(a, b)
    return re.sub(r'\\\*\(..|\\\*.', '', s)


def man_examples(path):
    try:
        text = gzip.open(path, 'rt', errors='replace').read()
    except OSError:
        return
    in_examples = verbatim = False
    for raw in text.split('\n'):
        if raw.startswith(('.SH', '.Sh')):
            in_examples = bool(re.match(r'\.S[Hh]\s+"?EXAMPLES?', raw))
            verbatim = False
        elif not in_examples:
            continue
        elif re.match(r'\.(nf|EX|Vb|Bd)', raw):
            verbatim = True
        elif re.match(r'\.(fi|EE|Ve|Ed)', raw):
            verbatim = False
        elif not raw.startswith(('.', "'")):
            line = unroff(raw).strip()
            prompt = re.match(r'^[$%#]\s+(.*)', line)
            if prompt:
                line = prompt.group(1).strip()
            elif not verbatim:
                continue
            if line and len(line) <= 300 and not line.endswith('\\'):
                yield line


def is_shell_script(path):
    try:
        with open(path, 'rb') as f:
            head = f.read(64)
    except OSError:
        return False
    return bool(re.match(rb'#! ?(/usr)?/bin/(env )?(ba)?sh\b', head))


def go_strings(src):
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`', src):
        if m.group(1) is None:
            yield m.group(2)
            continue
        try:
            yield json.loads('"' + m.group(1).replace("\\'", "'").replace('\\x', '\\u00') + '"')
        except ValueError:
            pass


def write(name, lines):
    with open(os.path.join(OUT, name), 'w') as f:
        for line in lines:
            f.write(json.dumps(line) + '\n')
    print(f'{name}: {len(lines)} lines', file=sys.stderr)


examples, scripts, mvdan = set(), set(), set()
for d, _, files in os.walk(ROOT):
    for name in files:
        path = os.path.join(d, name)
        if os.path.islink(path):
            continue
        if re.search(r'/man/man[18]/[^/]*\.gz$', path):
            examples.update(man_examples(path))
        elif path.endswith('/interp/interp_test.go'):
            mvdan.update(s.strip() for s in go_strings(open(path).read()))
        elif os.path.getsize(path) < 500_000 and is_shell_script(path):
            for line in open(path, encoding='utf-8', errors='replace'):
                line = line.strip()
                if line and not line.startswith('#') and len(line) <= 300 and not line.endswith('\\'):
                    scripts.add(line)

per_program = collections.Counter()
capped = []
for line in sorted(examples):
    per_program[line.split()[0]] += 1
    if per_program[line.split()[0]] <= 20:
        capped.append(line)
random.seed(21)
write('examples.jsonl', capped)
write('scripts.jsonl', random.sample(sorted(scripts), min(30_000, len(scripts))))
write('mvdan.jsonl', sorted(s for s in mvdan if s and len(s) <= 300))
