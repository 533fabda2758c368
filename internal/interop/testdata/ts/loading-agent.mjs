// The small agent behind the TypeScript servers, and how they serve it:
// it can load any session, replaying the updates given ([sessionUpdate,
// text] pairs) before it answers.
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { createServer } from "node:http";

export const loadingAgent = (name, updates) => () =>
  acp
    .agent({ name })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: true },
      authMethods: [],
      agentInfo: { name, version: "0.0.1" },
    }))
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      for (const [sessionUpdate, text] of updates) {
        await client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate, content: { type: "text", text } },
        });
      }
      return {};
    });

// serve runs an AcpServer for createAgent on node:http, on 127.0.0.1 at
// a free port, and prints its endpoint URL as its first stdout line;
// withServer may attach more to the server (a WebSocket upgrade).
export const serve = (createAgent, withServer = () => {}) => {
  const server = new AcpServer({ createAgent });
  const http = createServer(createNodeHttpHandler(server));
  withServer(server, http);
  http.listen(0, "127.0.0.1", () => {
    console.log(`http://127.0.0.1:${http.address().port}/acp`);
  });
  process.on("SIGTERM", async () => {
    await server.close();
    http.close();
    process.exit(0);
  });
};
