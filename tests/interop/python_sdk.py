"""Interop: the official MCP Python SDK (PyPI `mcp`) drives bashtools-mcp.

Twice: with the low-level stdio client and `ClientSession.initialize()`
(the classic handshake), and with the high-level `Client` in mode "auto",
which probes `server/discover` and then speaks the stateless 2026-07-28
form (a `_meta` protocol version on every request).

Each run lists the tools, runs bash in the foreground and in the
background, reads with bash_output, stops with kill_shell, and receives the
shell's end as a `notifications/message` through the logging callback.

Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
Usage: python python_sdk.py PATH/TO/bashtools-mcp
"""

import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

BIN = sys.argv[1]
ARGS = ["--kill-grace", "1"]
failures = 0


def check(label, name, ok, why=""):
    global failures
    if ok:
        print(f"ok - python-sdk {label}: {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL - python-sdk {label}: {name}: {why}", flush=True)


def text_of(result):
    return result.content[0].text if result.content else ""


def task_id(text):
    start = text.index("bash_")
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end]


async def exercise(label, session, logs):
    """The checks, on any object with list_tools and call_tool."""
    listed = await session.list_tools()
    names = [t.name for t in listed.tools]
    check(label, "tools/list", names == ["bash", "bash_output", "kill_shell", "monitor", "list_shells"], names)
    bash = next(t for t in listed.tools if t.name == "bash")
    check(
        label,
        "bash schema and annotations",
        bash.input_schema.get("required") == ["command"]
        and bash.annotations is not None
        and bash.annotations.destructive_hint is True,
        bash,
    )

    r = await session.call_tool("bash", {"command": "echo hello from bash"})
    check(label, "bash foreground", text_of(r) == "hello from bash" and not r.is_error, r)

    r = await session.call_tool("bash", {"command": "exit 4"})
    check(label, "bash failure is an error result", r.is_error and text_of(r) == "Exit code 4", r)

    r = await session.call_tool(
        "bash", {"command": "echo started; sleep 60", "run_in_background": True, "description": "sleeper"}
    )
    text = text_of(r)
    check(label, "bash background", text.startswith("Command running in background with ID: bash_"), text)
    shell = task_id(text)

    seen = ""
    with anyio.move_on_after(20):
        while "started" not in seen:
            r = await session.call_tool("bash_output", {"bash_id": shell})
            seen += text_of(r)
            await anyio.sleep(0.05)
    check(label, "bash_output", "<status>running</status>" in seen and "started" in seen, seen)

    r = await session.call_tool("kill_shell", {"shell_id": shell})
    check(label, "kill_shell", text_of(r) == f"Successfully stopped task: {shell} (echo started; sleep 60)", r)

    got = None
    with anyio.move_on_after(20):
        while got is None:
            params = await logs.receive()
            data = params.data if isinstance(params.data, dict) else {}
            if data.get("task_id") == shell:
                got = params
    check(
        label,
        "notification as notifications/message",
        got is not None
        and got.level == "info"
        and got.logger == "bashtools"
        and got.data.get("status") == "killed"
        and "<task-notification>" in got.data.get("text", ""),
        got,
    )


async def classic():
    label = "stdio_client+ClientSession (initialize)"
    send, logs = anyio.create_memory_object_stream(100)

    async def on_log(params):
        await send.send(params)

    server = StdioServerParameters(command=BIN, args=ARGS)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            init = await session.initialize()
            check(
                label,
                "initialize",
                init.server_info.name == "bashtools" and init.protocol_version == "2025-11-25",
                init,
            )
            await exercise(label, session, logs)


async def stateless():
    label = "Client mode=auto (2026-07-28)"
    send, logs = anyio.create_memory_object_stream(100)

    async def on_log(params):
        await send.send(params)

    server = StdioServerParameters(command=BIN, args=ARGS)
    async with Client(server, mode="auto", log_level="info", logging_callback=on_log) as client:
        check(
            label,
            "server/discover adopted",
            client.session.discover_result is not None and client.session.protocol_version == "2026-07-28",
            client.session.protocol_version,
        )
        await exercise(label, client, logs)


async def main():
    for run in (classic, stateless):
        try:
            with anyio.fail_after(120):
                await run()
        except Exception as e:  # a crash is one failed check, the other run still goes
            check(run.__name__, "run", False, repr(e))


anyio.run(main)
sys.exit(1 if failures else 0)
