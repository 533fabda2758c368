// The official TypeScript SDK's server (AcpServer) taking WebSockets
// through the `ws` package with permessage-deflate on, in front of a
// small agent that can load any session: it replays a short update and
// two long ones (compressed on the wire, the second referring back to
// the first), then answers. It listens on 127.0.0.1 on a free port and
// prints its endpoint URL as its first stdout line.
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { loadingAgent } from "./loading-agent.mjs";

const long = "A restored answer that repeats itself. ".repeat(200);
const createAgent = loadingAgent("interop-ts-ws-agent", [
  ["user_message_chunk", "Hello from an earlier run."],
  ["agent_message_chunk", long],
  ["agent_message_chunk", long],
]);

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
