// The official TypeScript SDK's Streamable HTTP server (AcpServer) on
// node:http, in front of a small agent that can load any session: it
// replays two updates, then answers. It listens on 127.0.0.1 on a free
// port and prints its endpoint URL as its first stdout line.
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { createServer } from "node:http";
import { loadingAgent } from "./loading-agent.mjs";

const createAgent = loadingAgent("interop-ts-http-agent", [
  ["user_message_chunk", "Hello from an earlier run."],
  ["agent_message_chunk", "This session was restored."],
]);

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
