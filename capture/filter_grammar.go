package capture

// FilterGrammar is the filter language's help text, shown by `?` in the
// inspector's filter bar and by `acpscope dump --help-filter`.
const FilterGrammar = `Filter language (dump --filter, tail --filter, the inspector's filter bar)

Terms
  method:GLOB        method name; * matches anything: method:session/*
                     (responses by their request, wrappers by their content)
  dir:client         sent by the client (editor); dir:agent: by the agent
  kind:KIND          request, notification, response, error, batch, stderr,
                     invalid (invalid JSON, invalid UTF-8 or not JSON-RPC),
                     nonprotocol, invalid-json, invalid-utf8
  error              error responses (same as kind:error)
  id:N               request id: id:7 finds 7 and "7"
  session:S          ACP sessionId, or a prefix of it
  update:GLOB        session/update variant: update:agent_message_chunk
  conn:N             transport connection number (HTTP and WebSocket captures)
  flag:NAME          partial, crlf, batch-member, truncated, binary,
                     bad-version, empty, after-exit
  size>N             wire size; also <, >=, <=, =; units B KB MB GB KiB MiB GiB
  latency>D          response time: latency>2s, latency<150ms, latency>500 (ms)
  seq>N              sequence number
  a.b.c=VALUE        JSON path in the message: params.update.sessionUpdate=plan,
                     result.stopReason=cancelled, params.prompt.0.type=text;
                     strings compare by text (* globs), others by JSON text;
                     params.… reaches into a proxy-chain wrapper's message
  word               text in the raw bytes, ignoring case
  "quoted text"      text in the raw bytes, exactly; \" and \\ inside quotes
  hop:N  hop>0       proxy-chain hop: hop:1 travels in _proxy/successor
                     (method:_proxy/* matches the wrappers themselves)
  mcp.method:GLOB    MCP method an mcp/message carries: mcp.method:tools/call
  mcp.tool:GLOB      tool of an MCP tools/call carried over ACP
                     (both match the answers to those calls too)
  fault:GLOB         altered by acpscope (a fault plan, a hold, send): fault:*
                     for all; an action fault:drop, a stage fault:dropped
                     (replaced, forwarded, injected), who fault:intercept
                     (plan, send), or a rule's name fault:slow-*

Operators (not binds tightest, then and, then or)
  a b  a and b       both
  a or b             either
  not a  !a          not a
  ( … )              grouping

Examples
  method:session/prompt or error
  hop:1 method:session/prompt     prompts a proxy forwarded to its successor
  mcp.tool:read_* error
  dir:agent update:tool_call* not "pending"
  latency>2s (method:session/prompt or method:fs/*)
  size>1MiB kind:notification
`
