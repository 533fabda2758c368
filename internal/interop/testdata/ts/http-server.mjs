// The official TypeScript SDK's Streamable HTTP server (AcpServer) on
// node:http, in front of a small agent that can load any session: it
// replays two updates, then answers. It listens on 127.0.0.1 on a free
// port and prints its endpoint URL as its first stdout line.
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { createServer } from "node:http";

const createAgent = () =>
  acp
    .agent({ name: "interop-ts-http-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
      authMethods: [],
      agentInfo: { name: "interop-ts-http-agent", version: "0.0.1" },
    }))
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const say = (sessionUpdate, text) =>
        client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate, content: { type: "text", text } },
        });
      await say("user_message_chunk", "Hello from an earlier run.");
      await say("agent_message_chunk", "This session was restored.");
      return {};
    });

const server = new AcpServer({ createAgent });
const http = createServer(createNodeHttpHandler(server));
http.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${http.address().port}/acp`);
});
process.on("SIGTERM", async () => {
  await server.close();
  http.close();
  process.exit(0);
});
