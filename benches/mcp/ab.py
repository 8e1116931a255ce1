"""Paired comparison of bashtools-mcp binaries (or flags) against a direct
`bash -c 'echo hi'`: each call of each server runs beside a direct run,
turn about, and the median of the per-call ratios is printed with the
medians. Pairing follows the drift of a shared machine, which a ratio of
two medians taken apart does not.

Usage: python3 ab.py N BIN [BIN ...] [-- FLAG ...]
  python3 benches/mcp/ab.py 800 old/bashtools-mcp target/release/bashtools-mcp
  python3 benches/mcp/ab.py 800 target/release/bashtools-mcp -- --no-persist-env
The environment is passed on (BASHTOOLS_CONTAINMENT=session, say).
"""

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import StdioServer, text_of  # noqa: E402


def main():
    n = int(sys.argv[1])
    bins = sys.argv[2:]
    flags = []
    if "--" in bins:
        i = bins.index("--")
        bins, flags = bins[:i], bins[i + 1:]
    servers = [StdioServer([b] + flags) for b in bins]
    for s in servers:
        s.initialize()

    def call(s):
        r = s.request("tools/call", {"name": "bash", "arguments": {"command": "echo hi"}})
        assert "hi" in text_of(r), r

    def direct():
        subprocess.run(["bash", "-c", "echo hi"], capture_output=True, check=True)

    kinds = [direct] + [lambda s=s: call(s) for s in servers]
    for _ in range(30):
        for k in kinds:
            k()
    times = [[] for _ in kinds]
    for i in range(n):
        for j in range(len(kinds)):
            k = (i + j) % len(kinds)
            t0 = time.perf_counter()
            kinds[k]()
            times[k].append(time.perf_counter() - t0)
    base = times[0]
    print("direct median %.3f ms" % (statistics.median(base) * 1e3))
    for b, t in zip(bins, times[1:]):
        paired = statistics.median([x / y for x, y in zip(t, base)])
        print(
            "%s %s: median %.3f ms, ratio %.3f, paired %.3f"
            % (b, " ".join(flags), statistics.median(t) * 1e3, statistics.median(t) / statistics.median(base), paired)
        )
    for s in servers:
        s.close()


if __name__ == "__main__":
    main()
