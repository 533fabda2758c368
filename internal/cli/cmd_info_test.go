package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInfoDemo: the names, versions and capabilities the demo's real
// client and agent exchanged, and its session with title and turns.
func TestInfoDemo(t *testing.T) {
	dir := demoCapture(t)
	r := runCLI(t, nil, "info", "--dir", dir)
	if r.code != 0 {
		t.Fatalf("info: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"(proxy)",
		"client          acpscope-demo-client 1.0.0",
		"agent           acpscope-demo-agent 1.0.0",
		"protocol        1\n",
		"client can      fs.readTextFile fs.writeTextFile terminal\n",
		"agent can       loadSession promptCapabilities.embeddedContext promptCapabilities.image\n",
		`session sess_1 (new, 2 turns) "Fix the greeting in main.go"`,
	} {
		if !strings.Contains(squash(r.stdout), squash(want)) {
			t.Errorf("info lacks %q:\n%s", want, r.stdout)
		}
	}
}

// infoConversation is a session's set-up as agents send it: modes,
// models and config options in the session/new result, then updates
// that change them, a title, _meta and an extension method.
const infoConversation = `{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"_meta":{"zed.dev/x":1}},"clientInfo":{"name":"zed","version":"0.201.0"}}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"list":{}}},"authMethods":[{"id":"apikey","name":"API key"}],"agentInfo":{"name":"my-agent","version":"2.0"}}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[],"_meta":{"traceparent":"00-1"}}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s9","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code"}]},"models":{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"Model One"},{"modelId":"m2","name":"Model Two"}]},"configOptions":[{"id":"effort","name":"Effort","type":"select","currentValue":"low","options":[]}]}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"start"},{"name":"review","description":"review"}]}}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"current_mode_update","currentModeId":"code"}}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"effort","name":"Effort","type":"select","currentValue":"high","options":[]}]}}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"session_info_update","title":"Refactor the parser","_meta":{"acme/ui":{"pinned":true}}}}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":3,"method":"_acme/ping","params":{}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s9","prompt":[{"type":"text","text":"hi"}]}}}
`

func TestInfoFacts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "setup.jsonl")
	if err := os.WriteFile(src, []byte(infoConversation), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, nil, "import", "--dir", dir, src); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	text := runCLI(t, nil, "info", "--dir", dir)
	for _, want := range []string{
		"client          zed 0.201.0\n",
		"agent           my-agent 2.0\n",
		"protocol        1 (the client asked for 2)\n",
		"client can      fs.readTextFile\n",
		"agent can       loadSession sessionCapabilities.list\n",
		"auth            apikey (API key)\n",
		`session s9 (new, 1 turn) "Refactor the parser"`,
		"mode            code; of ask (Ask), code (Code)\n",
		"model           m1; of m1 (Model One), m2 (Model Two)\n",
		"config          effort=high\n",
		"commands        /init, /review\n",
		"zed.dev/x       ×1 from #1: initialize params.clientCapabilities._meta\n",
		"traceparent     ×1 from #3: session/new params._meta\n",
		"acme/ui         ×1 from #8: session/update params.update._meta\n",
		"_acme/ping      extension ×1\n",
	} {
		if !strings.Contains(squash(text.stdout), squash(want)) {
			t.Errorf("info lacks %q:\n%s%s", want, text.stdout, text.stderr)
		}
	}
	js := runCLI(t, nil, "info", "--dir", dir, "--format", "json")
	var facts struct {
		Connections []struct {
			Client            struct{ Name, Version string }
			ProtocolVersion   json.Number
			AgentCapabilities map[string]any
			AuthMethods       []struct{ ID string }
		}
		Sessions []struct {
			ID, Title, CurrentMode, CurrentModel string
			ConfigOptions                        []struct{ ID, CurrentValue string }
			AvailableCommands                    []struct{ ID string }
		}
		MetaKeys []struct{ Key string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &facts); err != nil || js.code != 0 {
		t.Fatalf("info --format json: exit %d, %v\n%s", js.code, err, js.stdout)
	}
	if len(facts.Connections) != 1 || facts.Connections[0].Client.Name != "zed" || facts.Connections[0].ProtocolVersion != "1" ||
		facts.Connections[0].AgentCapabilities["loadSession"] != true || len(facts.Connections[0].AuthMethods) != 1 {
		t.Errorf("connections: %+v", facts.Connections)
	}
	if len(facts.Sessions) != 1 || facts.Sessions[0].Title != "Refactor the parser" || facts.Sessions[0].CurrentMode != "code" ||
		facts.Sessions[0].CurrentModel != "m1" || facts.Sessions[0].ConfigOptions[0].CurrentValue != "high" || len(facts.Sessions[0].AvailableCommands) != 2 {
		t.Errorf("sessions: %+v", facts.Sessions)
	}
	if len(facts.MetaKeys) != 3 {
		t.Errorf("_meta keys: %+v, want acme/ui, traceparent, zed.dev/x", facts.MetaKeys)
	}
}

var spaces = regexp.MustCompile(` +`)

// squash turns runs of spaces into one, so that checks do not depend on
// how wide a column is.
func squash(s string) string { return spaces.ReplaceAllString(s, " ") }

// FuzzWalkMeta: no body panics the _meta walk or the capability text,
// and every key reported sits under a path ending in _meta.
func FuzzWalkMeta(f *testing.F) {
	for _, s := range []string{`{"a":{"_meta":{"k":1}},"b":[{"_meta":{"x":[]}}]}`, `{"_meta":5}`, `[[[{"_meta":{}}]]]`, `{"a":`, `"_meta"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		walkMeta(body, func(path, key string) {
			if !strings.HasSuffix(path, "_meta") {
				t.Errorf("key %q reported at %q", key, path)
			}
		})
		capabilityText(body)
	})
}
