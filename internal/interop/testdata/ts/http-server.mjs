// The official TypeScript SDK's Streamable HTTP server (AcpServer) on
// node:http, in front of a small agent that can load any session: it
// replays two updates, then answers. It listens on 127.0.0.1 on a free
// port and prints its endpoint URL as its first stdout line.
import { loadingAgent, serve } from "./loading-agent.mjs";

serve(
  loadingAgent("interop-ts-http-agent", [
    ["user_message_chunk", "Hello from an earlier run."],
    ["agent_message_chunk", "This session was restored."],
  ]),
);
