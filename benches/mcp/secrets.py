#!/usr/bin/env python3
"""The cost of masking secrets (README, "Secrets"), through the MCP server: with 20
secret variables in the commands' environment, and with none, alternating.

- 1 GiB of short lines rendered by a foreground `bash`
  (`yes 'Compiling some-crate v1.2.3' | head -c 1G`), the wall time of the
  call, 3 times each;
- `echo hi` round trips (raw JSON-RPC over stdio, 200 calls, median).

Masking looks at the text shown (at most --output-limit characters), never
the whole output, so neither should move. Usage:
`python3 benches/mcp/secrets.py target/release/bashtools-mcp`."""
import json, os, statistics, subprocess, sys, time


def session(binary, secrets):
    env = dict(os.environ)
    for k in list(env):
        if "TOKEN" in k.upper() or "SECRET" in k.upper() or k.upper().endswith("_KEY"):
            del env[k]
    if secrets:
        for i in range(20):
            env[f"SERVICE_{i}_TOKEN"] = f"tok_{i:02d}_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def call(i, command):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": command, "timeout": 600}}}) + "\n")
        p.stdin.flush()
        for line in p.stdout:
            m = json.loads(line)
            if m.get("id") == i:
                return m

    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}) + "\n")
    p.stdin.flush()
    p.stdout.readline()
    return p, call


def render(binary, secrets):
    p, call = session(binary, secrets)
    t = time.perf_counter()
    call(1, "yes 'Compiling some-crate v1.2.3 (/src/some-crate)' | head -c 1G")
    took = time.perf_counter() - t
    p.stdin.close(); p.wait()
    return took * 1000


def echo(binary, secrets, n=200):
    p, call = session(binary, secrets)
    times = []
    for i in range(n):
        t = time.perf_counter()
        call(10 + i, "echo hi")
        times.append(time.perf_counter() - t)
    p.stdin.close(); p.wait()
    return statistics.median(times) * 1000


if __name__ == "__main__":
    b = sys.argv[1]
    for _ in range(3):
        without, with_ = render(b, False), render(b, True)
        print(f"1 GiB rendered: none {without:.0f} ms | 20 secrets {with_:.0f} ms | ratio {with_ / without:.3f}x")
    for _ in range(3):
        without, with_ = echo(b, False), echo(b, True)
        print(f"echo round trip: none {without:.3f} ms | 20 secrets {with_:.3f} ms | ratio {with_ / without:.3f}x")
