// An ACP client on the official TypeScript SDK. It spawns the agent
// command given as arguments (no shell), runs one session with two
// prompts (INTEROP_TS_PROMPTS=1 for one), answers fs/* from memory, terminal/* with a simulated command
// and permission requests with allow_once, then closes the agent's stdin,
// waits for it to exit and prints what it saw as one JSON line.
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const argv = process.argv.slice(2);
const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const cwd = "/workspace/ts";
const files = new Map([[`${cwd}/main.go`, 'package main\n\nfunc main() { println("hi") }\n']]);
const seen = { agent: "", sessionId: "", updates: [], requests: [], stopReasons: [] };
let terminals = 0;

const app = acp
  .client({ name: "interop-ts-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.updates.push(params.update.sessionUpdate);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    seen.requests.push("session/request_permission");
    const option = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    seen.requests.push("fs/read_text_file");
    if (!files.has(params.path)) throw acp.RequestError.resourceNotFound(params.path);
    return { content: files.get(params.path) };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    seen.requests.push("fs/write_text_file");
    files.set(params.path, params.content);
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, () => {
    seen.requests.push("terminal/create");
    return { terminalId: `ts-term-${++terminals}` };
  })
  .onRequest(acp.methods.client.terminal.output, () => {
    seen.requests.push("terminal/output");
    return { output: "ok\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, () => {
    seen.requests.push("terminal/wait_for_exit");
    return { exitCode: 0, signal: null };
  })
  .onRequest(acp.methods.client.terminal.kill, () => ({}))
  .onRequest(acp.methods.client.terminal.release, () => {
    seen.requests.push("terminal/release");
    return {};
  });

let failure = null;
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: "interop-ts-client", version: "0.0.1" },
    });
    seen.agent = init.agentInfo?.name ?? "";
    const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    seen.sessionId = session.sessionId;
    const prompts = [
      [{ type: "text", text: "Say hello from the TypeScript client." }],
      [
        { type: "text", text: "Now look at this file." },
        { type: "resource_link", uri: `file://${cwd}/main.go`, name: "main.go" },
      ],
    ];
    const count = Number(process.env.INTEROP_TS_PROMPTS ?? prompts.length);
    for (const prompt of prompts.slice(0, count)) {
      const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt });
      seen.stopReasons.push(res.stopReason);
    }
  });
} catch (err) {
  failure = String(err?.stack ?? err);
}
child.stdin.end();
const exit = await exited;
console.log(JSON.stringify({ ...seen, exit, failure }));
process.exit(failure === null && exit.code === 0 ? 0 : 1);
