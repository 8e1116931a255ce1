"""Round-trip latency of one shell command over MCP stdio, against running it
directly, for bashtools-mcp and other MCP shell servers.

Every server is started and through the initialize handshake, then all are
timed in turn, call by call, N `tools/call`s of each one's shell tool running
`echo hi`, from writing the request line to reading its response line. The baseline is the same
driver running `bash -c 'echo hi'` itself with subprocess. Each answer is
checked for `hi`; answers without it are counted (a server that returns
before the command's output has arrived is fast but not done).

Usage: python bench.py --bashtools BIN [--desktop-commander BIN] [--mcp-shell-server BIN] [-n 500]
Prints a Markdown table (median, p99, and each median's ratio to the direct run).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WARMUP = 20


class StdioServer:
    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed its stdout during {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a server that logs to stdout: not a message
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def initialize(self):
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []))


class Target:
    """One thing to time: `once()` runs one call and says whether its answer
    held the command's output."""

    def __init__(self, name, once, close=lambda: None):
        self.name, self.once, self.close = name, once, close
        self.samples, self.missed = [], 0

    def time_one(self):
        t0 = time.perf_counter()
        ok = self.once()
        self.samples.append(time.perf_counter() - t0)
        self.missed += not ok


def server_target(name, argv, tool, arguments, env=None):
    server = StdioServer(argv, env)
    server.initialize()

    def once():
        result = server.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {result}")
        return "hi" in text_of(result)

    return Target(name, once, server.close)


STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def stateless_target(name, argv):
    """The same `bash` call as a 2026-07-28 stateless request (no
    handshake; `_meta` on the request, `resultType` on the result)."""
    server = StdioServer(argv)

    def once():
        result = server.request(
            "tools/call",
            {"_meta": STATELESS_META, "name": "bash", "arguments": {"command": "echo hi"}},
        )
        return "hi" in text_of(result)

    return Target(name, once, server.close)


def task_latency(argv, n, after_ms=50):
    """A task's life through the tasks extension: a `bash` call that runs
    past the task delay answers with a task; from the command's end to a
    `tasks/get` that sees it completed. Returns (create, end -> completed)
    samples in seconds."""
    meta = dict(STATELESS_META)
    meta["io.modelcontextprotocol/clientCapabilities"] = {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }
    server = StdioServer(argv + ["--task-after-ms", str(after_ms)])
    create, complete = [], []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            created = server.request(
                "tools/call",
                {"_meta": meta, "name": "bash",
                 "arguments": {"command": "sleep 0.1; date +%s%N"}},
            )
            create.append(time.perf_counter() - t0)
            task = created["taskId"]
            while True:
                got = server.request("tasks/get", {"_meta": meta, "taskId": task})
                if got["status"] != "working":
                    seen = time.time_ns()
                    break
            printed = int(text_of(got["result"]).strip())
            complete.append((seen - printed) / 1e9)
    finally:
        server.close()
    return create, complete


def direct_target():
    def once():
        out = subprocess.run(["bash", "-c", "echo hi"], capture_output=True, check=True).stdout
        return out == b"hi\n"

    return Target("direct `bash -c 'echo hi'` (subprocess)", once)


def run(targets, n):
    """Warms every target up, then times them in turn, call by call, so the
    drift of a shared machine hits all of them alike."""
    for t in targets:
        for _ in range(WARMUP):
            t.once()
    for _ in range(n):
        for t in targets:
            t.time_one()


def p99(samples):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bashtools", required=True)
    ap.add_argument("--desktop-commander")
    ap.add_argument("--mcp-shell-server")
    ap.add_argument("-n", type=int, default=500)
    a = ap.parse_args()

    targets = [direct_target()]
    try:
        targets.append(server_target("bashtools-mcp (`bash`)", [a.bashtools], "bash", {"command": "echo hi"}))
        # What the sticky working directory (on by default) costs.
        targets.append(
            server_target(
                "bashtools-mcp --no-persist-cwd",
                [a.bashtools, "--no-persist-cwd"],
                "bash",
                {"command": "echo hi"},
            )
        )
        # What the carried environment (on by default) costs.
        targets.append(
            server_target(
                "bashtools-mcp --no-persist-env",
                [a.bashtools, "--no-persist-env"],
                "bash",
                {"command": "echo hi"},
            )
        )
        targets.append(
            server_target(
                "bashtools-mcp --no-persist-cwd --no-persist-env",
                [a.bashtools, "--no-persist-cwd", "--no-persist-env"],
                "bash",
                {"command": "echo hi"},
            )
        )
        # `echo hi` cannot move its shell, so it runs without the end
        # record; a line that may (`cd . && …`) has it: the sticky
        # directory's and the kept environment's cost, where they apply.
        targets.append(
            server_target(
                "bashtools-mcp, `cd . && echo hi` (end recorded)",
                [a.bashtools],
                "bash",
                {"command": "cd . && echo hi"},
            )
        )
        # The same call, stateless (MCP 2026-07-28).
        targets.append(stateless_target("bashtools-mcp, stateless 2026-07-28", [a.bashtools]))
        if a.desktop_commander:
            targets.append(
                server_target(
                    "desktop-commander (`start_process`)",
                    ["node", a.desktop_commander],
                    "start_process",
                    {"command": "echo hi", "timeout_ms": 10000},
                )
            )
        if a.mcp_shell_server:
            targets.append(
                server_target(
                    "mcp-shell-server (`shell_execute`)",
                    [a.mcp_shell_server],
                    "shell_execute",
                    {"command": ["echo", "hi"]},
                    env={"ALLOW_COMMANDS": "echo"},
                )
            )
        run(targets, a.n)
    finally:
        for t in targets:
            t.close()

    base = statistics.median(targets[0].samples)
    print(f"{a.n} calls each, interleaved call by call, after {WARMUP} warm-up calls; times in milliseconds.\n")
    print("| what | median | p99 | median / direct | answers without the output |")
    print("|---|---:|---:|---:|---:|")
    for t in targets:
        med = statistics.median(t.samples)
        print(f"| {t.name} | {med * 1e3:.2f} | {p99(t.samples) * 1e3:.2f} | {med / base:.2f}× | {t.missed} |")

    # A task's life (tasks extension): created at the task delay (50 ms
    # here), then from the command's last act to a tasks/get that sees it
    # completed (polled back to back).
    create, complete = task_latency([a.bashtools], max(20, a.n // 10))
    print()
    print(f"Tasks, {len(create)} tasks (`--task-after-ms 50`, `sleep 0.1; date +%s%N`):\n")
    print("| what | median | p99 |")
    print("|---|---:|---:|")
    print(f"| call → CreateTaskResult (includes the 50 ms delay) | {statistics.median(create) * 1e3:.2f} | {p99(create) * 1e3:.2f} |")
    print(f"| command's end → tasks/get sees `completed` | {statistics.median(complete) * 1e3:.2f} | {p99(complete) * 1e3:.2f} |")

if __name__ == "__main__":
    sys.exit(main())
