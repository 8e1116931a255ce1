#!/usr/bin/env python3
"""`echo hi` round trips through the MCP server with 200 rules loaded and
with none (raw JSON-RPC over stdio, 200 calls each, median), alternating
three times. The rules: a Codex rules file made here, allowing `echo` and
199 more prefixes (ask and deny rules with alternatives among them). Usage:
`python3 benches/mcp/policy_echo.py target/release/bashtools-mcp`."""
import json, os, statistics, subprocess, sys, tempfile, time


def rules_file():
    words = ["echo", "git", "cargo", "npm", "ls", "cat", "grep", "sed", "make", "docker"]
    lines = ['prefix_rule(pattern=["echo"], decision="allow")']
    n = 0
    while len(lines) < 200:
        w = words[n % len(words)]
        decision = ["allow", "prompt", "forbidden"][n % 3]
        lines.append(f'prefix_rule(pattern=["{w}", ["sub{n}", "alt{n}"]], decision="{decision}")')
        n += 1
    f = tempfile.NamedTemporaryFile("w", suffix=".rules", delete=False)
    f.write("\n".join(lines) + "\n")
    f.close()
    return f.name


def run(args, n=200):
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def send(m):
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()

    def recv(i):
        for line in p.stdout:
            m = json.loads(line)
            if m.get("id") == i:
                return m

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    recv(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(n):
        t = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": "echo hi"}}})
        r = recv(100 + i)
        times.append(time.perf_counter() - t)
        assert r["result"]["content"][0]["text"] == "hi", r
    p.stdin.close()
    p.wait()
    return statistics.median(times) * 1000


if __name__ == "__main__":
    binary = sys.argv[1]
    rules = rules_file()
    try:
        for _ in range(3):
            plain = run([binary])
            ruled = run([binary, "--rules", rules])
            print(f"no rules: {plain:.3f} ms | 200 rules: {ruled:.3f} ms | ratio {ruled / plain:.3f}x")
    finally:
        os.unlink(rules)
