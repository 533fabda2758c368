// An ACP agent on the official TypeScript SDK, serving stdin/stdout.
// Each prompt is one small but complete turn: message chunks, a read
// tool call answered through fs/read_text_file, an edit behind
// session/request_permission and fs/write_text_file, a command in a
// client terminal, and end_turn (or cancelled after session/cancel).
import * as acp from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
let clientCaps = {};
let sessions = 0;
const cancelled = new Set();

async function turn(client, sessionId) {
  const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  const say = (text) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  await say("Hello from the TypeScript agent. ");
  await say("Let me look at main.go.");
  const path = "/workspace/ts/main.go";
  await update({ sessionUpdate: "tool_call", toolCallId: "ts_call_1", title: "Read main.go", kind: "read", status: "pending", locations: [{ path }] });
  let text = "";
  if (clientCaps.fs?.readTextFile) {
    try {
      text = (await client.request(acp.methods.client.fs.readTextFile, { sessionId, path })).content;
    } catch (err) {
      process.stderr.write(`ts-agent: read failed: ${err.message}\n`);
    }
  }
  await update({ sessionUpdate: "tool_call_update", toolCallId: "ts_call_1", status: "completed" });
  const newText = text + "// edited by the TypeScript agent\n";
  const diff = { type: "diff", path, oldText: text, newText };
  await update({ sessionUpdate: "tool_call", toolCallId: "ts_call_2", title: "Edit main.go", kind: "edit", status: "pending", content: [diff] });
  const answer = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId: "ts_call_2", title: "Edit main.go", kind: "edit", status: "pending", content: [diff] },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  if (answer.outcome.outcome === "cancelled" || cancelled.has(sessionId)) {
    await update({ sessionUpdate: "tool_call_update", toolCallId: "ts_call_2", status: "failed" });
    return "cancelled";
  }
  if (answer.outcome.optionId === "allow" && clientCaps.fs?.writeTextFile) {
    await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path, content: newText });
  }
  await update({ sessionUpdate: "tool_call_update", toolCallId: "ts_call_2", status: "completed" });
  if (clientCaps.terminal) {
    const term = await client.createTerminal({ sessionId, command: "echo", args: ["ok"] });
    await update({ sessionUpdate: "tool_call", toolCallId: "ts_call_3", title: "echo ok", kind: "execute", status: "in_progress", content: [{ type: "terminal", terminalId: term.id }] });
    await term.currentOutput();
    const exit = await term.waitForExit();
    await term.release();
    await update({ sessionUpdate: "tool_call_update", toolCallId: "ts_call_3", status: exit.exitCode === 0 ? "completed" : "failed" });
  }
  await say("Done.");
  return "end_turn";
}

const app = acp
  .agent({ name: "interop-ts-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    clientCaps = params.clientCapabilities ?? {};
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false, promptCapabilities: { image: false, audio: false, embeddedContext: true } },
      authMethods: [],
      agentInfo: { name: "interop-ts-agent", version: "0.0.1" },
    };
  })
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `ts-session-${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    cancelled.delete(params.sessionId);
    return { stopReason: await turn(client, params.sessionId) };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    cancelled.add(params.sessionId);
  });

process.stderr.write("ts-agent: ready\n");
const conn = app.connect(stream);
await conn.closed;
process.stderr.write("ts-agent: input closed, exiting\n");
