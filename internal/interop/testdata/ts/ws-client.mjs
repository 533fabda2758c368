// An ACP client on the official TypeScript SDK's WebSocket transport,
// through the `ws` package (which offers permessage-deflate). It
// connects to the ws:// endpoint given as its first argument,
// initializes, loads the session given as its second with a long _meta
// (so it too is sent compressed), then closes and prints, as one JSON
// line, the extensions agreed and what arrived in which order: each
// replayed session/update with its text's length, and "loaded".
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const [url, sessionId] = process.argv.slice(2);
const seen = { extensions: null, events: [], failure: null };

class Watched extends WebSocket {
  constructor(...args) {
    super(...args);
    this.once("open", () => {
      seen.extensions = this.extensions;
    });
  }
}

const app = acp
  .client({ name: "interop-ts-ws-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.events.push(`update ${params.sessionId} ${params.update.sessionUpdate} ${params.update.content.text.length}`);
  });

try {
  await app.connectWith(createWebSocketStream(url, { WebSocket: Watched }), async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "interop-ts-ws-client", version: "0.0.1" },
    });
    if (!init.agentCapabilities?.loadSession) throw new Error("the agent cannot load sessions");
    await ctx.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: "/workspace/ts",
      mcpServers: [],
      _meta: { note: "padding that makes this request worth compressing ".repeat(100) },
    });
    seen.events.push("loaded");
  });
} catch (err) {
  seen.failure = String(err?.stack ?? err);
}
console.log(JSON.stringify(seen));
process.exit(seen.failure === null ? 0 : 1);
