"""Interop: the policy's *ask* answered through the official MCP Python SDK's
`elicitation_callback`, in both eras (README, "Policy").

Classic (`ClientSession`, initialize): the server sends `elicitation/create`
and the callback's answer decides. Stateless (`Client` mode "auto",
2026-07-28): the call's result is an `InputRequiredResult`; the SDK's
multi-round-trip driver runs the same callback and retries the call with
the answer and the server's `requestState`.

In each era: `once` runs the line, `deny` and `decline` refuse it with
`Command denied: LINE`, `always` runs it and the next line with the same
prefix is not asked again; a deny rule refuses without a question.

Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
Usage: python python_policy.py PATH/TO/bashtools-mcp
"""

import os
import sys
import tempfile

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import ElicitResult

BIN = sys.argv[1]
failures = 0


def check(label, name, ok, why=""):
    global failures
    if ok:
        print(f"ok - python-sdk policy {label}: {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL - python-sdk policy {label}: {name}: {why}", flush=True)


def text_of(result):
    return result.content[0].text if result.content else ""


class Person:
    """Answers each question with the next planned answer, and keeps them."""

    def __init__(self):
        self.plan = []
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        action, decision = self.plan.pop(0)
        content = {"decision": decision} if decision else None
        return ElicitResult(action=action, content=content)


async def exercise(label, session, person, wd):
    def made(name):
        return os.path.exists(os.path.join(wd, name))

    person.plan.append(("accept", "once"))
    r = await session.call_tool("bash", {"command": "touch one && echo made"})
    asked = person.asked[-1] if person.asked else None
    check(label, "once runs the line", text_of(r) == "made" and not r.is_error and made("one"), r)
    check(
        label,
        "the question names the line",
        asked is not None
        and asked.message == "Run this command?\n\ntouch one && echo made\n\nNeeds approval: touch",
        asked,
    )

    for n, answer in enumerate([("accept", "deny"), ("decline", None)]):
        person.plan.append(answer)
        r = await session.call_tool("bash", {"command": f"touch no{n}"})
        check(
            label,
            f"{answer[0]}/{answer[1]} refuses",
            r.is_error and text_of(r) == f"Command denied: touch no{n}" and not made(f"no{n}"),
            r,
        )

    person.plan.append(("accept", "always"))
    r = await session.call_tool("bash", {"command": "touch two"})
    before = len(person.asked)
    r2 = await session.call_tool("bash", {"command": "touch two && echo again"})
    check(
        label,
        "always: the prefix runs unasked",
        not r.is_error and text_of(r2) == "again" and len(person.asked) == before,
        (r, r2),
    )

    before = len(person.asked)
    r = await session.call_tool("bash", {"command": "true && rm -f one"})
    check(
        label,
        "a deny rule refuses without a question",
        r.is_error and text_of(r) == "Command not allowed: rm" and made("one") and len(person.asked) == before,
        r,
    )


async def classic():
    label = "ClientSession (initialize)"
    person = Person()
    with tempfile.TemporaryDirectory() as wd:
        server = StdioServerParameters(command=BIN, args=["--working-directory", wd, "--ask", "touch", "--deny", "rm"])
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write, elicitation_callback=person) as session:
                await session.initialize()
                await exercise(label, session, person, wd)


async def stateless():
    label = "Client mode=auto (2026-07-28)"
    person = Person()
    with tempfile.TemporaryDirectory() as wd:
        server = StdioServerParameters(command=BIN, args=["--working-directory", wd, "--ask", "touch", "--deny", "rm"])
        async with Client(server, mode="auto", elicitation_callback=person) as client:
            check(label, "2026-07-28 adopted", client.session.protocol_version == "2026-07-28", client.session.protocol_version)
            await exercise(label, client, person, wd)


async def main():
    for run in (classic, stateless):
        try:
            with anyio.fail_after(120):
                await run()
        except Exception as e:
            check(run.__name__, "run", False, repr(e))


anyio.run(main)
sys.exit(1 if failures else 0)
