"""Interop: a whole session with the official MCP Python SDK (PyPI `mcp`),
the same script for the 1.x line and the 2.x line (`stdio_client` +
`ClientSession`, which both have).

Checks that notifications of background work arrive in tool results, that
progress arrives for a call with a progress callback (the SDK sends the
token), and that closing the session while background shells run raises
nothing and leaves no process behind.

Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
Usage: python python_session.py PATH/TO/bashtools-mcp
"""

import importlib.metadata
import os
import sys
import time
import uuid

import anyio
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

BIN = sys.argv[1]
VERSION = importlib.metadata.version("mcp")
LABEL = f"python-sdk {VERSION} session"
ARGS = ["--kill-grace", "1", "--progress-interval-ms", "100"]
failures = 0


def check(name, ok, why=""):
    global failures
    if ok:
        print(f"ok - {LABEL}: {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL - {LABEL}: {name}: {why}", flush=True)


def texts(result):
    return [c.text for c in result.content]


def task_id(text):
    start = text.index("bash_")
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end]


def processes_with(marker):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


async def session_work(marker):
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    server = StdioServerParameters(command=BIN, args=ARGS)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            r = await session.call_tool(
                "bash", {"command": "sleep 0.3; echo done", "run_in_background": True, "description": "short"}
            )
            shell = task_id(texts(r)[0])
            r = await session.call_tool("bash_output", {"bash_id": shell, "block": True})
            items = texts(r)
            check(
                "the end of a background shell arrives in a result",
                items[0].startswith("<status>completed</status>")
                and any(t.startswith("<task-notification>") and f"<task-id>{shell}</task-id>" in t for t in items[1:]),
                items,
            )

            r = await session.call_tool(
                "bash",
                {"command": "for i in 1 2 3 4 5; do echo step$i; sleep 0.2; done", "timeout": 60},
                progress_callback=on_progress,
            )
            check(
                "progress arrives for a call with a progress callback",
                texts(r)[0].endswith("step5")
                and len(progress) >= 2
                and all(p[1] == 60 for p in progress)
                and any((p[2] or "").startswith("step") for p in progress),
                progress,
            )

            for i in range(5):
                await session.call_tool(
                    "bash", {"command": f"sleep 1000; : {marker}", "run_in_background": True}
                )
            deadline = time.monotonic() + 15
            while len(processes_with(marker)) < 5 and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            check("background shells run", len(processes_with(marker)) >= 5, processes_with(marker))
    # Leaving both contexts closed the session while the shells ran.


async def main():
    marker = f"py-session-{uuid.uuid4().hex}"
    try:
        with anyio.fail_after(120):
            await session_work(marker)
        check("closing while background shells run raises nothing", True)
    except BaseException as e:  # an ExceptionGroup from the SDK's task group too
        check("closing while background shells run raises nothing", False, repr(e))
    deadline = time.monotonic() + 15
    while processes_with(marker) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    check("closing leaves no process behind", not processes_with(marker), processes_with(marker))


anyio.run(main)
sys.exit(1 if failures else 0)
