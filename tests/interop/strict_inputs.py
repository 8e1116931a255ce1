"""Strict inputs (contract §9): bashtools-mcp accepts exactly the tool
arguments its own advertised inputSchema accepts.

Argument objects are generated at random (a fixed seed, so a failure
reproduces) from the schema's property names, unknown names and a pool of
edge values; each is judged by the `jsonschema` package's Draft 2020-12
validator (a JSON Schema implementation nobody here wrote) and sent to the
server, whose answer must agree: a schema-valid object is never refused as
invalid input, and an invalid one always is, with a text naming the
argument. Arguments that are not an object are -32602. Every result's
structuredContent is validated against the tool's outputSchema too.

Usage: strict_inputs.py PATH_TO_BASHTOOLS_MCP
Prints `ok - …` / `FAIL - …` lines.
"""

import json
import os
import random
import subprocess
import sys
import tempfile

from jsonschema import Draft202012Validator

BIN = sys.argv[1]
SAMPLES = int(os.environ.get("STRICT_SAMPLES", "250"))

# What the server says when it refuses the arguments themselves (contract
# §4 and §9); every other error (an unknown ID, a bad regex, a command that
# failed) is about values the schema cannot judge.
REFUSALS = (
    "Invalid input:",
    "No command given:",
    "Invalid command: it contains a NUL byte",
    "Interactive commands are not enabled",
)

STRINGS = ["", " ", "\t\n", "true", "30", "echo hi", "ls", "bash_1", "monitor_1",
           "a\u0000b", "\u00a0", "\ufeff", "\u0085", "x" * 40, "é", "\u000b"]
VALUES = STRINGS + [0, -1, -0.5, 0.25, 1, 3, 1e300, 2**70, True, False, None,
                    [], ["ls"], {}, {"a": 1}]
# Values for a property, weighted towards its own type so that many
# objects are valid.
BY_TYPE = {
    "string": ["true", "echo hi", "bash_1", "", " ", "a\u0000b", "\u00a0", "é", "x" * 40],
    "number": [0.25, 1, 3, 1e300, 0, -1, 2**70],
    "boolean": [True, False],
}


def ok(name):
    print(f"ok - {name}", flush=True)


def fail(name, detail=""):
    print(f"FAIL - {name}" + (f": {detail}" if detail else ""), flush=True)


class Server:
    def __init__(self, *flags):
        self.dir = tempfile.mkdtemp(prefix="bashtools-strict-")
        self.p = subprocess.Popen(
            [BIN, "--working-directory", self.dir, "--max-timeout", "5", *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        self.n = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "strict-inputs", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.n:
                return msg

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        subprocess.run(["rm", "-rf", self.dir])


def sample(rng, schema):
    props = list(schema["properties"])
    args = {}
    for name in props:
        if rng.random() < 0.55 or name in schema.get("required", []) and rng.random() < 0.8:
            kind = schema["properties"][name].get("type")
            pool = BY_TYPE.get(kind, VALUES) if rng.random() < 0.75 else VALUES
            args[name] = rng.choice(pool)
    if rng.random() < 0.1:
        args[rng.choice(["bogus", "id", "cmd", "Command"])] = rng.choice(VALUES)
    return args


def check_config(name, flags, rng):
    s = Server(*flags)
    try:
        tools = s.request("tools/list", {})["result"]["tools"]
        disagreements = []
        unstructured = []
        checked = 0
        valid_count = 0
        for tool in tools:
            schema = tool["inputSchema"]
            validator = Draft202012Validator(schema)
            Draft202012Validator.check_schema(schema)
            Draft202012Validator.check_schema(tool["outputSchema"])
            output = Draft202012Validator(tool["outputSchema"])
            for _ in range(SAMPLES):
                args = sample(rng, schema)
                valid = validator.is_valid(args)
                valid_count += valid
                r = s.request("tools/call", {"name": tool["name"], "arguments": args})
                if "error" in r:
                    disagreements.append((tool["name"], args, valid, r["error"]))
                    continue
                res = r["result"]
                text = res["content"][0]["text"] if res.get("content") else ""
                structured = res.get("structuredContent")
                if structured is None or not output.is_valid(structured) \
                        or structured.get("is_error") != bool(res.get("isError")):
                    unstructured.append((tool["name"], args, structured))
                refused = bool(res.get("isError")) and text.startswith(REFUSALS)
                checked += 1
                if valid == refused:
                    disagreements.append((tool["name"], args, valid, text[:160]))
        if disagreements:
            for d in disagreements[:10]:
                fail(f"{name}: server and schema agree",
                     f"{d[0]} {json.dumps(d[1])[:200]} schema-valid={d[2]} answer={d[3]!r}")
        else:
            ok(f"{name}: server and schema agree on {checked} generated argument objects "
               f"({valid_count} valid, {checked - valid_count} not)")
        if unstructured:
            for u in unstructured[:10]:
                fail(f"{name}: every structuredContent validates against its outputSchema",
                     f"{u[0]} {json.dumps(u[1])[:160]} -> {json.dumps(u[2])[:200]}")
        else:
            ok(f"{name}: every structuredContent validates against its outputSchema")
        # Arguments that are not an object are the request's fault.
        bad = [s.request("tools/call", {"name": "bash", "arguments": a}) for a in (["ls"], "ls", 7, None)]
        codes = [b.get("error", {}).get("code") for b in bad]
        if codes == [-32602] * 4:
            ok(f"{name}: arguments that are not an object are -32602")
        else:
            fail(f"{name}: arguments that are not an object are -32602", str(codes))
    finally:
        s.close()


def main():
    rng = random.Random(20261203)
    check_config("strict inputs, default", [], rng)
    check_config("strict inputs, --interactive", ["--interactive"], rng)


if __name__ == "__main__":
    main()
