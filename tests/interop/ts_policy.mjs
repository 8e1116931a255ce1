// Interop: the policy's *ask* answered through the official MCP TypeScript
// SDK's client (npm `@modelcontextprotocol/sdk`), classic era: the client
// declares elicitation and answers `elicitation/create` with a request
// handler (README, "Policy").
//
// Checks that `once` runs the line, `deny` and `decline` refuse it with
// `Command denied: LINE`, `always` runs it and the next line with the same
// prefix is not asked again, and a deny rule refuses without a question.
//
// Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
// Usage: node ts_policy.mjs PATH/TO/bashtools-mcp PATH/TO/node_modules
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [bin, modules] = process.argv.slice(2);
const sdk = resolve(modules, "@modelcontextprotocol/sdk/dist/esm");
const load = (file) => import(pathToFileURL(join(sdk, file)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { ElicitRequestSchema } = await load("types.js");
const version = JSON.parse(readFileSync(join(modules, "@modelcontextprotocol/sdk/package.json"))).version;
const label = `ts-sdk ${version} policy`;

let failures = 0;
function check(name, ok, why = "") {
  if (ok) {
    console.log(`ok - ${label}: ${name}`);
  } else {
    failures++;
    console.log(`FAIL - ${label}: ${name}: ${typeof why === "string" ? why : JSON.stringify(why)}`);
  }
}

const text = (r) => (r.content && r.content[0] ? r.content[0].text : "");
const wd = mkdtempSync(join(tmpdir(), "bashtools-ts-policy-"));
const made = (name) => existsSync(join(wd, name));
const plan = [];
const asked = [];

try {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["--working-directory", wd, "--ask", "touch", "--deny", "rm"],
    stderr: "ignore",
  });
  const client = new Client({ name: "interop", version: "0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    const [action, decision] = plan.shift();
    return decision ? { action, content: { decision } } : { action };
  });
  await client.connect(transport);

  plan.push(["accept", "once"]);
  let r = await client.callTool({ name: "bash", arguments: { command: "touch one && echo made" } });
  check("once runs the line", text(r) === "made" && !r.isError && made("one"), r);
  check(
    "the question names the line",
    asked.length === 1 && asked[0].message === "Run this command?\n\ntouch one && echo made\n\nNeeds approval: touch",
    asked,
  );

  for (const [n, answer] of [["accept", "deny"], ["decline", null]].entries()) {
    plan.push(answer);
    r = await client.callTool({ name: "bash", arguments: { command: `touch no${n}` } });
    check(`${answer.join("/")} refuses`, r.isError && text(r) === `Command denied: touch no${n}` && !made(`no${n}`), r);
  }

  plan.push(["accept", "always"]);
  r = await client.callTool({ name: "bash", arguments: { command: "touch two" } });
  const before = asked.length;
  const again = await client.callTool({ name: "bash", arguments: { command: "touch two && echo again" } });
  check("always: the prefix runs unasked", !r.isError && text(again) === "again" && asked.length === before, [r, again]);

  r = await client.callTool({ name: "bash", arguments: { command: "true && rm -f one" } });
  check(
    "a deny rule refuses without a question",
    r.isError && text(r) === "Command not allowed: rm" && made("one") && asked.length === before,
    r,
  );
  await client.close();
} catch (e) {
  check("run", false, String(e && e.stack ? e.stack : e));
} finally {
  rmSync(wd, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
