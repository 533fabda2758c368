package interop

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The clients. Each spawns the agent command appended to its argv.
var (
	goSDKClient = clientPeer{
		name: "go-sdk-client",
		argv: func(t *testing.T) []string { goTools(t); return []string{tools.goClient} },
		// It asks the user to choose a permission option on its own
		// stdin; "1" is "Allow this change". It writes real files into
		// its working directory when the agent asks, hence dir.
		stdin: "1\n1\n1\n",
		dir:   true,
		check: func(t *testing.T, stdout string) {
			if !strings.Contains(stdout, "Agent completed") {
				t.Errorf("the Go SDK client did not complete its prompt:\n%s", stdout)
			}
		},
	}
	tsClient    = tsClientWith(2)
	tsClientOne = tsClientWith(1) // for the Go SDK agent, which sleeps about 5 s per prompt
	demoClient  = clientPeer{
		name: "demo-client",
		argv: func(t *testing.T) []string {
			goTools(t)
			return []string{tools.acpscope, "demo-client", "--prompt", "Say hello.", "--"}
		},
		check: func(t *testing.T, stdout string) {
			if !strings.Contains(stdout, "→ end_turn") {
				t.Errorf("the demo client's turn did not end with end_turn:\n%s", stdout)
			}
		},
	}
)

// demoClientAll exercises every path of the demo peers (cancel, load,
// two sessions, an MCP server with a secret), so that the official
// schema and lint see all of what they send.
var demoClientAll = clientPeer{
	name: "demo-client-all-paths",
	argv: func(t *testing.T) []string {
		goTools(t)
		return []string{tools.acpscope, "demo-client", "--cancel", "--load", "--mcp-secret", "--sessions", "2", "--"}
	},
	check: func(t *testing.T, stdout string) {
		for _, want := range []string{"→ end_turn", "→ cancelled", "session/load replayed"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the demo client's summary lacks %q:\n%s", want, stdout)
			}
		}
	},
}

// The agents, each run behind the proxy.
var (
	goSDKAgent = agentPeer{
		name: "go-sdk-agent",
		argv: func(t *testing.T) []string { goTools(t); return []string{tools.goAgent} },
	}
	tsAgent = agentPeer{
		name:   "ts-sdk-agent",
		argv:   func(t *testing.T) []string { return []string{"node", filepath.Join(tsPeers(t), "agent.mjs")} },
		stderr: "ts-agent: ready",
	}
	demoAgent = agentPeer{
		name: "demo-agent",
		argv: func(t *testing.T) []string {
			goTools(t)
			return []string{tools.acpscope, "demo-agent", "--delay", "0"}
		},
		stderr: "[acpscope-demo-agent] input closed, exiting",
	}
)

// tsClientWith is the TypeScript client sending n prompts.
func tsClientWith(n int) clientPeer {
	want := strings.TrimSuffix(strings.Repeat("end_turn,", n), ",")
	return clientPeer{
		name: "ts-sdk-client",
		argv: func(t *testing.T) []string { return []string{"node", filepath.Join(tsPeers(t), "client.mjs")} },
		env:  []string{"INTEROP_TS_PROMPTS=" + strconv.Itoa(n)},
		check: func(t *testing.T, stdout string) {
			var seen struct {
				StopReasons []string `json:"stopReasons"`
				Failure     *string  `json:"failure"`
			}
			if err := json.Unmarshal([]byte(lastLine(stdout)), &seen); err != nil {
				t.Fatalf("the TypeScript client's report %q: %v", stdout, err)
			}
			if got := strings.Join(seen.StopReasons, ","); seen.Failure != nil || got != want {
				t.Errorf("the TypeScript client saw stop reasons %q (want %s), failure %v", got, want, deref(seen.Failure))
			}
		},
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestInterop runs peers that no one on this project wrote through the
// stdio proxy, and checks that each side received exactly the bytes the
// other sent, that the conversation completed, and that the capture
// holds every line byte for byte.
func TestInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("interop runs real SDK peers (about 10 s); skipped with -short")
	}
	tests := []struct {
		client clientPeer
		agent  agentPeer
	}{
		{goSDKClient, goSDKAgent},
		{tsClient, tsAgent},
		{tsClientOne, goSDKAgent},
		{goSDKClient, tsAgent},
		{goSDKClient, demoAgent},
		{tsClient, demoAgent},
		{demoClient, goSDKAgent},
		{demoClient, tsAgent},
		{demoClientAll, demoAgent},
	}
	for _, tc := range tests {
		t.Run(tc.client.name+"→"+tc.agent.name, func(t *testing.T) {
			t.Parallel() // the Go SDK agent sleeps about 5 s per prompt
			o := run(t, tc.client, tc.agent)
			if o.clientExit != nil {
				t.Errorf("client: %v\n%s", o.clientExit, o.logs())
			}
			if o.proxyExit != nil {
				t.Errorf("acpscope: %v\n%s", o.proxyExit, o.logs())
			}
			checkTransparent(t, o)
			checkNoComplaints(t, o)
			tc.client.check(t, o.clientOut)
			checkCapture(t, o, tc.agent.stderr)
			checkLint(t, o)
		})
	}
}

// checkTransparent compares both ends of both directions.
func checkTransparent(t *testing.T, o *outcome) {
	t.Helper()
	if !bytes.Equal(o.clientWrote, o.agentRead) {
		t.Errorf("client→agent bytes differ: the client wrote %d bytes, the agent read %d\n%s",
			len(o.clientWrote), len(o.agentRead), firstDifference(o.clientWrote, o.agentRead))
	}
	if !bytes.Equal(o.agentWrote, o.clientRead) {
		t.Errorf("agent→client bytes differ: the agent wrote %d bytes, the client read %d\n%s",
			len(o.agentWrote), len(o.clientRead), firstDifference(o.agentWrote, o.clientRead))
	}
	for _, want := range []string{`"initialize"`, `"session/new"`, `"session/prompt"`} {
		if !bytes.Contains(o.clientWrote, []byte(want)) {
			t.Errorf("the client never sent %s; it wrote:\n%s", want, o.clientWrote)
		}
	}
	if !bytes.Contains(o.agentWrote, []byte(`"stopReason":"end_turn"`)) {
		t.Errorf("the agent never ended a turn; it wrote:\n%s", o.agentWrote)
	}
}

// complaints are what the SDKs log when a peer's message breaks the
// schema or the JSON-RPC pairing (the TypeScript SDK's console.error
// lines; the Go SDK's slog errors). Such notifications are dropped, not
// answered, so only the logs tell.
var complaints = []string{"Invalid message", "Error handling", "Got response to unknown request", " ERROR "}

// checkNoComplaints fails when either peer complained about the other:
// the demo peers must satisfy both official SDKs' schemas.
func checkNoComplaints(t *testing.T, o *outcome) {
	t.Helper()
	for _, log := range []struct{ who, text string }{{"client", o.clientErr}, {"agent (via the proxy's stderr)", o.proxyErr}} {
		for _, c := range complaints {
			if strings.Contains(log.text, c) {
				t.Errorf("the %s complained (%q):\n%s", log.who, c, log.text)
			}
		}
	}
}

// firstDifference shows where two byte streams part.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-40)
	return "first difference at byte " + strconv.Itoa(i) + ":\n  " + quoteWindow(a, from, i) + "\n  " + quoteWindow(b, from, i)
}

func quoteWindow(b []byte, from, at int) string {
	return strings.ReplaceAll(string(b[from:min(len(b), at+40)]), "\n", `\n`)
}
