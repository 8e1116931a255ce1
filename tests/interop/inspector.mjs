// Interop: the MCP Inspector (npm `@modelcontextprotocol/inspector`) drives
// bashtools-mcp.
//
// - `mcp-inspector --cli`: one-shot calls (each starts the server, calls one
//   method, and stops it): tools/list and a foreground bash.
// - `mcpdo`, the Inspector's connection CLI: one server for many calls, in the
//   legacy era (initialize) and the modern one (2026-07-28, server/discover):
//   tools/list, bash in the foreground and in the background, bash_output,
//   kill_shell, the shell's end as a notifications/message seen by
//   `logging/tail`, and no shell left once the connection is closed.
//
// Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
// Usage: node inspector.mjs PATH/TO/bashtools-mcp PATH/TO/node_modules/.bin SCRATCH_DIR

import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [bin, nodeBin, scratch] = process.argv.slice(2);
const serverArgs = ["--kill-grace", "1"];
let failures = 0;

function check(name, ok, why = "") {
  if (ok) {
    console.log(`ok - inspector ${name}`);
  } else {
    failures += 1;
    console.log(`FAIL - inspector ${name}: ${typeof why === "string" ? why : JSON.stringify(why)}`);
  }
}

// The Inspector keeps a catalog, secrets and a daemon under HOME: a scratch one.
mkdirSync(scratch, { recursive: true });
const env = {
  ...process.env,
  HOME: scratch,
  MCP_CATALOG_PATH: join(scratch, "mcp.json"),
  MCP_INSPECTOR_SECRET_STORE: "file",
};

function run(tool, args, timeout = 60000) {
  return execFileSync(join(nodeBin, tool), args, { env, timeout, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function json(tool, args) {
  const out = run(tool, args);
  try {
    return JSON.parse(out);
  } catch {
    return { unparsed: out };
  }
}

function text(result) {
  return result?.content?.[0]?.text ?? "";
}

function attempt(name, f) {
  try {
    f();
  } catch (e) {
    check(name, false, String(e.stderr || e.message || e));
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Processes whose command line contains `marker`.
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {}
  }
  return found;
}

// ---- one-shot CLI
attempt("--cli tools/list", () => {
  const r = json("mcp-inspector", ["--cli", bin, ...serverArgs, "--method", "tools/list"]);
  const names = (r.tools || []).map((t) => t.name);
  check("--cli tools/list", names.join(",") === "bash,bash_output,kill_shell,monitor,list_shells", names);
});
attempt("--cli tools/call bash", () => {
  const r = json("mcp-inspector", [
    "--cli", bin, ...serverArgs, "--method", "tools/call", "--tool-name", "bash", "--tool-arg", "command=echo one shot",
  ]);
  check("--cli tools/call bash", text(r) === "one shot" && r.isError === false, r);
});

// ---- mcpdo: one connection, many calls
for (const line of run("mcpdo", ["private"]).split("\n")) {
  const m = line.match(/^export (\w+)='(.*)'$/);
  if (m) env[m[1]] = m[2];
}

async function session(era) {
  const conn = `bt-${era}`;
  const call = (tool, args) => json("mcpdo", ["--format", "json", `@${conn}`, "tools/call", tool, JSON.stringify(args)]);
  const label = `mcpdo ${era}`;

  attempt(`${label}: connect`, () => {
    const out = run("mcpdo", ["--connection", conn, "connect", "--era", era, bin, "--", ...serverArgs]);
    check(`${label}: connect`, out.toLowerCase().includes(`era: ${era}`), out);
  });
  attempt(`${label}: tools/list`, () => {
    const r = json("mcpdo", ["--format", "json", `@${conn}`, "tools/list"]);
    const names = (r.tools || []).map((t) => t.name);
    check(`${label}: tools/list`, names.join(",") === "bash,bash_output,kill_shell,monitor,list_shells", names);
  });
  attempt(`${label}: bash foreground`, () => {
    const r = call("bash", { command: "echo hi; exit 0" });
    check(`${label}: bash foreground`, text(r) === "hi" && r.isError === false, r);
  });
  let id = "";
  attempt(`${label}: bash background`, () => {
    const r = call("bash", { command: `echo started; sleep 60; : interop-${era}`, run_in_background: true });
    const m = text(r).match(/ID: (bash_\d+)/);
    id = m ? m[1] : "";
    check(`${label}: bash background`, id !== "" && r.isError === false, r);
  });
  let seen = "";
  let error = "";
  for (let i = 0; i < 100 && !seen.includes("started") && !error; i++) {
    try {
      seen += text(call("bash_output", { bash_id: id }));
    } catch (e) {
      error = String(e.stderr || e.message || e);
    }
    if (!seen.includes("started")) await sleep(100);
  }
  check(`${label}: bash_output`, seen.startsWith("<status>running</status>") && seen.includes("started"), error || seen);

  // The end of the shell arrives as a notifications/message on the tail.
  const tail = spawn(join(nodeBin, "mcpdo"), ["--format", "json", `@${conn}`, "logging/tail"], { env });
  let tailed = "";
  tail.stdout.on("data", (d) => (tailed += d));
  await sleep(1000); // let the tail subscribe before the shell ends
  attempt(`${label}: kill_shell`, () => {
    const r = call("kill_shell", { shell_id: id });
    check(`${label}: kill_shell`, text(r).startsWith(`Successfully stopped task: ${id} (`), r);
  });
  const want = `"task_id": "${id}"`;
  for (let i = 0; i < 200 && !(tailed.includes("notifications/message") && tailed.includes(want)); i++) await sleep(100);
  tail.kill();
  check(
    `${label}: notification via logging/tail`,
    tailed.includes("notifications/message") && tailed.includes(want) && tailed.includes('"status": "killed"'),
    tailed.slice(0, 500),
  );

  // A shell still running when the connection closes must not survive it.
  const marker = `interop-leftover-${era}`;
  try {
    const r = call("bash", { command: `sleep 300; : ${marker}`, run_in_background: true });
    run("mcpdo", ["disconnect", conn]);
    let left = processesWith(marker);
    for (let i = 0; i < 200 && left.length > 0; i++) {
      await sleep(100);
      left = processesWith(marker);
    }
    check(`${label}: disconnect stops the shells`, r.isError === false && left.length === 0, `left: ${left}; ${text(r)}`);
  } catch (e) {
    check(`${label}: disconnect stops the shells`, false, String(e.stderr || e.message || e));
  }
}

try {
  await session("legacy");
  await session("modern");
} finally {
  try {
    run("mcpdo", ["daemon", "stop"]);
  } catch {}
}
process.exit(failures ? 1 : 0);
