#!/usr/bin/env python3
"""How often the allow-list gate refuses a harmless line: its false refusals.

    measure.py REFERENCE JUDGE [--max-percent P] CORPUS.jsonl...

For each line of each corpus (one JSON string per line), REFERENCE (mvdan/sh's
parser, reference/main.go) lists the command words. A line is *plain* when the
reference reads it, `bash -n` accepts it, it defines no function and starts no
coproc, every command word is a plain literal, and it holds no NUL or carriage
return. JUDGE (the example gate-judge) then checks it against an allow list of
exactly those words (a trap's literal action counts, since it runs).

A plain line the gate refuses for a variable the contract forbids (PATH, IFS,
LD_*, ...) is counted apart: that refusal is promised. Every other refusal of a
plain line is counted and written, with its reason, to refused.tsv beside the
first corpus. With --max-percent, the exit status is 1 when more than P % of all
plain lines are refused.
"""
import collections, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor


def run(program, inputs):
    text = ''.join(json.dumps(i) + '\n' for i in inputs)
    out = subprocess.run([program], input=text, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def bash_reads(line):
    return subprocess.run(['bash', '-n', '-c', line], capture_output=True).returncode == 0


def main(argv):
    reference, judge, rest = argv[0], argv[1], argv[2:]
    limit = None
    if rest[:1] == ['--max-percent']:
        limit, rest = float(rest[1]), rest[2:]
    plain_total = refused_total = 0
    rows = []
    for path in rest:
        lines = [json.loads(l) for l in open(path)]
        refs = run(reference, lines)
        plain = [(l, r) for l, r in zip(lines, refs)
                 if r['ok'] and not r['func'] and not r['nonliteral'] and r['words']
                 and '\0' not in l and '\r' not in l]
        with ThreadPoolExecutor(4) as pool:
            readable = list(pool.map(bash_reads, [l for l, _ in plain]))
        plain = [p for p, ok in zip(plain, readable) if ok]
        verdicts = run(judge, [{'line': l, 'allowed': r['words']} for l, r in plain])
        refused = [(l, v) for (l, _), v in zip(plain, verdicts) if not v['ok']]
        promised = [x for x in refused if x[1]['kind'] == 'forbidden-variable']
        refused = [x for x in refused if x[1]['kind'] != 'forbidden-variable']
        n = len(plain) - len(promised)
        kinds = collections.Counter(v['kind'] for _, v in refused)
        print(f'{os.path.basename(path)}: {len(lines)} lines, {n} plain, {len(refused)} refused '
              f'({100 * len(refused) / max(1, n):.2f} %) {dict(sorted(kinds.items()))}; '
              f'{len(promised)} more set a variable the contract forbids')
        plain_total += n
        refused_total += len(refused)
        rows += [(os.path.basename(path), l, v) for l, v in refused]
    percent = 100 * refused_total / max(1, plain_total)
    print(f'all: {plain_total} plain lines, {refused_total} refused ({percent:.3f} %)')
    out = os.path.join(os.path.dirname(os.path.abspath(rest[0])), 'refused.tsv')
    with open(out, 'w') as f:
        for corpus, line, v in rows:
            f.write(f"{corpus}\t{v['kind']}\t{json.dumps(line)}\t{v['text']}\n")
    print(f'refused lines: {out}')
    if limit is not None and percent > limit:
        print(f'more than {limit} % of plain lines refused', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
