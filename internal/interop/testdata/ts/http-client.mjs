// An ACP client on the official TypeScript SDK's Streamable HTTP
// transport. It connects to the endpoint given as its first argument,
// initializes, loads the session given as its second, then closes the
// connection and prints, as one JSON line, what arrived in which order:
// each replayed session/update, and "loaded" when session/load answered.
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const [url, sessionId] = process.argv.slice(2);
const seen = { events: [], failure: null };

const app = acp
  .client({ name: "interop-ts-http-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.events.push(`update ${params.sessionId} ${params.update.sessionUpdate}`);
  });

try {
  await app.connectWith(createHttpStream(url), async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "interop-ts-http-client", version: "0.0.1" },
    });
    if (!init.agentCapabilities?.loadSession) throw new Error("the agent cannot load sessions");
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: "/workspace/ts", mcpServers: [] });
    seen.events.push("loaded");
  });
} catch (err) {
  seen.failure = String(err?.stack ?? err);
}
console.log(JSON.stringify(seen));
process.exit(seen.failure === null ? 0 : 1);
