package capture

// The traffic in testdata/v2-ids.acpscope.gz, a capture written by format
// version 2 (request ids indexed by hash bucket first): requests both
// ways with string, number and repeated ids, and their responses.
const (
	v2ClientLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":"two","method":"session/new","params":{"cwd":"/w","mcpServers":[]}}
{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}
{"jsonrpc":"2.0","id":7,"result":{"content":"x"}}
{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"s1"}}
`
	v2AgentLines = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":"two","result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a"}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
`
)
