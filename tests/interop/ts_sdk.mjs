// Interop: the official MCP TypeScript SDK's client (npm
// `@modelcontextprotocol/sdk`: `Client` + `StdioClientTransport`) drives
// bashtools-mcp through a whole session.
//
// Checks that notifications of background work arrive in tool results,
// that progress arrives for a call with `onprogress` (the SDK sends the
// token), and that closing the client while background shells run raises
// nothing and leaves no process behind.
//
// Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
// Usage: node ts_sdk.mjs PATH/TO/bashtools-mcp PATH/TO/node_modules
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";

const [bin, modules] = process.argv.slice(2);
const sdk = resolve(modules, "@modelcontextprotocol/sdk/dist/esm");
const load = (file) => import(pathToFileURL(join(sdk, file)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const version = JSON.parse(readFileSync(join(modules, "@modelcontextprotocol/sdk/package.json"))).version;
const label = `ts-sdk ${version}`;

let failures = 0;
function check(name, ok, why = "") {
  if (ok) {
    console.log(`ok - ${label}: ${name}`);
  } else {
    failures++;
    console.log(`FAIL - ${label}: ${name}: ${typeof why === "string" ? why : JSON.stringify(why)}`);
  }
}

function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`).includes(marker)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

const texts = (r) => r.content.map((c) => c.text);
const taskId = (text) => text.match(/bash_\d+/)[0];
const errors = [];
const marker = `ts-session-${randomUUID()}`;

try {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["--kill-grace", "1", "--progress-interval-ms", "100"],
    stderr: "ignore",
  });
  const client = new Client({ name: "interop", version: "0" });
  client.onerror = (e) => errors.push(String(e));
  await client.connect(transport);

  let r = await client.callTool({
    name: "bash",
    arguments: { command: "sleep 0.3; echo done", run_in_background: true, description: "short" },
  });
  const shell = taskId(texts(r)[0]);
  r = await client.callTool({ name: "bash_output", arguments: { bash_id: shell, block: true } });
  const items = texts(r);
  check(
    "the end of a background shell arrives in a result",
    items[0].startsWith("<status>completed</status>") &&
      items.slice(1).some((t) => t.startsWith("<task-notification>") && t.includes(`<task-id>${shell}</task-id>`)),
    items,
  );

  const progress = [];
  r = await client.callTool(
    { name: "bash", arguments: { command: "for i in 1 2 3 4 5; do echo step$i; sleep 0.2; done", timeout: 60 } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  check(
    "progress arrives for a call with onprogress",
    texts(r)[0].endsWith("step5") &&
      progress.length >= 2 &&
      progress.every((p) => p.total === 60) &&
      progress.some((p) => (p.message || "").startsWith("step")),
    progress,
  );

  for (let i = 0; i < 5; i++) {
    await client.callTool({
      name: "bash",
      arguments: { command: `sleep 1000; : ${marker}`, run_in_background: true },
    });
  }
  const started = Date.now() + 15000;
  while (processesWith(marker).length < 5 && Date.now() < started) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  check("background shells run", processesWith(marker).length >= 5, processesWith(marker));
  await client.close();
  check("closing while background shells run raises nothing", errors.length === 0, errors);
} catch (e) {
  check("the session runs and closes", false, String(e?.stack || e));
}

const deadline = Date.now() + 15000;
while (processesWith(marker).length > 0 && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
check("closing leaves no process behind", processesWith(marker).length === 0, processesWith(marker));
process.exit(failures ? 1 : 0);
