// The official TypeScript SDK's server (AcpServer) taking WebSockets
// through the `ws` package with permessage-deflate on, in front of a
// small agent that can load any session: it replays a short update and
// two long ones (compressed on the wire, the second referring back to
// the first), then answers. It listens on 127.0.0.1 on a free port and
// prints its endpoint URL as its first stdout line.
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";

const long = "A restored answer that repeats itself. ".repeat(200);

const createAgent = () =>
  acp
    .agent({ name: "interop-ts-ws-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
      authMethods: [],
      agentInfo: { name: "interop-ts-ws-agent", version: "0.0.1" },
    }))
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const say = (sessionUpdate, text) =>
        client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate, content: { type: "text", text } },
        });
      await say("user_message_chunk", "Hello from an earlier run.");
      await say("agent_message_chunk", long);
      await say("agent_message_chunk", long);
      return {};
    });

const server = new AcpServer({ createAgent });
const http = createServer(createNodeHttpHandler(server));
const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: true });
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
http.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${http.address().port}/acp`);
});
process.on("SIGTERM", async () => {
  await server.close();
  http.close();
  process.exit(0);
});
