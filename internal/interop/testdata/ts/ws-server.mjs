// The official TypeScript SDK's server (AcpServer) taking WebSockets
// through the `ws` package with permessage-deflate on, in front of a
// small agent that can load any session: it replays a short update and
// two long ones (compressed on the wire, the second referring back to
// the first), then answers. It listens on 127.0.0.1 on a free port and
// prints its endpoint URL as its first stdout line.
import { createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";
import { loadingAgent, serve } from "./loading-agent.mjs";

const long = "A restored answer that repeats itself. ".repeat(200);
serve(
  loadingAgent("interop-ts-ws-agent", [
    ["user_message_chunk", "Hello from an earlier run."],
    ["agent_message_chunk", long],
    ["agent_message_chunk", long],
  ]),
  (server, http) => {
    const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: true });
    http.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
  },
);
