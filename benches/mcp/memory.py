"""Start-up and memory of MCP shell servers (not a test).

For each server given: the time from starting the process to the response of
`initialize`, and its resident memory (VmRSS of the process and its
children that are not commands it ran) once idle. For bashtools-mcp also the
RSS after N `bash` calls that each print 60 KB (a result is cut to the
output limit), right after the last call and a few seconds later: a
finished call's result must not stay in memory until its timeout.

Usage: python memory.py --bashtools BIN [--desktop-commander JS] [--mcp-shell-server BIN] [-n 3000]
Prints Markdown tables.
"""

import argparse
import json
import os
import statistics
import subprocess
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Server:
    def __init__(self, argv, env=None):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed its stdout during {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == rid and "method" not in message:
                return message

    def initialize(self):
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        took = time.perf_counter() - self.started
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return took

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def startup(name, argv, env=None, runs=5):
    times, rss = [], []
    for _ in range(runs):
        s = Server(argv, env)
        times.append(s.initialize() * 1000)
        s.request("ping", {}) if name == "bashtools-mcp" else None
        time.sleep(0.5)  # idle: whatever it does after start has settled
        rss.append(rss_kib(s.proc.pid) / 1024)
        s.close()
    return statistics.median(times), statistics.median(rss)


def many_calls(binary, n):
    s = Server([binary])
    s.initialize()
    before = rss_kib(s.proc.pid) / 1024
    command = "head -c 60000 /dev/zero | tr '\\0' x"
    for _ in range(n):
        r = s.request("tools/call", {"name": "bash", "arguments": {"command": command}})
        assert r["result"]["content"][0]["text"].startswith("xxx"), r
    after = rss_kib(s.proc.pid) / 1024
    time.sleep(5)
    later = rss_kib(s.proc.pid) / 1024
    s.close()
    return before, after, later


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bashtools", required=True)
    p.add_argument("--desktop-commander")
    p.add_argument("--mcp-shell-server")
    p.add_argument("-n", type=int, default=3000)
    a = p.parse_args()
    servers = [("bashtools-mcp", [a.bashtools], None)]
    if a.mcp_shell_server:
        servers.append(("mcp-shell-server", [a.mcp_shell_server], {"ALLOW_COMMANDS": "echo"}))
    if a.desktop_commander:
        servers.append(("desktop-commander", ["node", a.desktop_commander], None))
    print("| server | start to `initialize` response, ms (median of 5) | idle RSS, MiB |")
    print("|---|---:|---:|")
    for name, argv, env in servers:
        t, r = startup(name, argv, env)
        print(f"| {name} | {t:.1f} | {r:.1f} |")
    before, after, later = many_calls(a.bashtools, a.n)
    print()
    print(f"| bashtools-mcp, {a.n} calls printing 60 KB | RSS, MiB |")
    print("|---|---:|")
    print(f"| before | {before:.1f} |")
    print(f"| right after the last call | {after:.1f} |")
    print(f"| 5 s later | {later:.1f} |")


main()
