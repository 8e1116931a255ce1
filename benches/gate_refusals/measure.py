#!/usr/bin/env python3
"""How often the allow-list gate refuses a harmless line: its false refusals.

    measure.py REFERENCE JUDGE [--max-percent P] [--max-total T] CORPUS.jsonl...

For each line of each corpus (one JSON string per line), REFERENCE (mvdan/sh's
parser, reference/main.go) lists the command words. A line is *plain* when the
reference reads it, `bash -n` accepts it, it defines no function and starts no
coproc, every command word is a plain literal, and it holds no NUL or carriage
return. JUDGE (the example gate-judge) then checks it against an allow list of
exactly those words (a trap's literal action counts, since it runs).

A plain line the gate refuses for a variable the contract forbids (PATH, IFS,
LD_*, ...) is counted apart: that refusal is promised. Every other refusal of a
plain line is counted and written, with its reason, to refused.tsv beside the
first corpus, with its class (classes.py): *required* (a bash run shows what
a value of the expanding part would do), *not required*, or *reference errs*.
With --max-percent, the exit status is 1 when more than P % of all plain lines
are refused without being required; with --max-total, when more than T % are
refused at all.
"""
import collections, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from classes import classify
from concurrent.futures import ThreadPoolExecutor


def run(program, inputs):
    text = ''.join(json.dumps(i) + '\n' for i in inputs)
    out = subprocess.run([program], input=text, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def bash_reads(line):
    return subprocess.run(['bash', '-n', '-c', line], capture_output=True).returncode == 0


def main(argv):
    reference, judge, rest = argv[0], argv[1], argv[2:]
    limit = total_limit = None
    while rest[:1] in (['--max-percent'], ['--max-total']):
        if rest[0] == '--max-percent':
            limit = float(rest[1])
        else:
            total_limit = float(rest[1])
        rest = rest[2:]
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
    classes = collections.Counter()
    verdicts = collections.Counter()
    demos = {}
    classified = []
    for corpus, line, v in rows:
        verdict, name, demo = classify(v['kind'], v['text'], line)
        classes[(verdict, name)] += 1
        verdicts[verdict] += 1
        if demo:
            demos[name] = demo
        classified.append((corpus, line, v, verdict, name))
    for (verdict, name), n in sorted(classes.items(), key=lambda x: (x[0][0], -x[1])):
        print(f'  {verdict}: {n:4} {name}' + (f'\n      shown by: {demos[name]}' if name in demos else ''))
    unneeded = verdicts['not required']
    unneeded_percent = 100 * unneeded / max(1, plain_total)
    print(f'not required: {unneeded} ({unneeded_percent:.3f} % of plain lines); required: '
          f"{verdicts['required']}; the reference errs: {verdicts['reference errs']}")
    out = os.path.join(os.path.dirname(os.path.abspath(rest[0])), 'refused.tsv')
    with open(out, 'w') as f:
        for corpus, line, v, verdict, name in classified:
            f.write(f"{corpus}\t{v['kind']}\t{json.dumps(line)}\t{v['text']}\t{verdict}\t{name}\n")
    print(f'refused lines: {out}')
    failed = 0
    if limit is not None and unneeded_percent > limit:
        print(f'more than {limit} % of plain lines refused without need', file=sys.stderr)
        failed = 1
    if total_limit is not None and percent > total_limit:
        print(f'more than {total_limit} % of plain lines refused', file=sys.stderr)
        failed = 1
    return failed


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
