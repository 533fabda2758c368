// The small agent behind the TypeScript servers: it can load any session,
// replaying the updates given ([sessionUpdate, text] pairs) before it
// answers.
import * as acp from "@agentclientprotocol/sdk";

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
