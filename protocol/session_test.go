package protocol

import (
	"path/filepath"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

func TestSessionOpeners(t *testing.T) {
	tests := []struct {
		method       string
		opens, mints bool
	}{
		{"session/new", true, true},
		{"session/fork", true, true},
		{"session/load", true, false},
		{"session/resume", true, false},
		{"session/prompt", false, false},
		{"initialize", false, false},
	}
	set := ConnectionLevelMethods()
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			if got := OpensSession(tt.method); got != tt.opens {
				t.Errorf("OpensSession = %v, want %v", got, tt.opens)
			}
			if got := MintsSession(tt.method); got != tt.mints {
				t.Errorf("MintsSession = %v, want %v", got, tt.mints)
			}
			if ConnectionLevel(tt.method) != tt.opens || set[tt.method] != tt.opens || CarriesMCPServers(tt.method) != tt.opens {
				t.Errorf("ConnectionLevel, its set and CarriesMCPServers disagree with OpensSession")
			}
		})
	}
}

func TestResponseSession(t *testing.T) {
	tests := []struct {
		method, session, result, want string
	}{
		{"session/new", "", `{"sessionId":"sess_1","modes":{}}`, "sess_1"},
		{"session/fork", "old", `{"sessionId":"new"}`, "new"},
		{"session/prompt", "s2", `{"stopReason":"end_turn"}`, "s2"},
		{"session/load", "s3", `{"sessionId":"other"}`, "s3"},
		{"session/new", "", `null`, ""},
		{"session/new", "", ``, ""},
	}
	for _, tt := range tests {
		if got := ResponseSession(tt.method, tt.session, []byte(tt.result)); got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.method, tt.result, got, tt.want)
		}
	}
}

func TestUpdateOf(t *testing.T) {
	tests := []struct {
		name, line, variant, text string
	}{
		{"chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"h\u00e9"}}}}`, "agent_message_chunk", "hé"},
		{"tool call content list", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","content":[{"type":"content"}]}}}`, "tool_call", ""},
		{"no variant", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"kind":"message"}}}`, "", ""},
		{"params not an object", `{"jsonrpc":"2.0","method":"session/update","params":[1]}`, "", ""},
		{"another method", `{"jsonrpc":"2.0","method":"_x/update","params":{"update":{"sessionUpdate":"plan"}}}`, "", ""},
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"update":{"sessionUpdate":"plan"}}}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := FromLine(1, wire.DirAgent, []byte(tt.line))
			if v, text := UpdateOf(&m); v != tt.variant || text != tt.text {
				t.Errorf("UpdateOf = %q, %q; want %q, %q", v, text, tt.variant, tt.text)
			}
			if tt.variant != "" && UpdateKind(m.Body) != tt.variant {
				t.Errorf("UpdateKind = %q, want %q", UpdateKind(m.Body), tt.variant)
			}
		})
	}
	for v, want := range map[string]bool{"agent_message_chunk": true, "user_message_chunk": true, "agent_thought_chunk": true, "tool_call_content_chunk": false, "plan": false} {
		if IsMessageChunk(v) != want {
			t.Errorf("IsMessageChunk(%q) = %v, want %v", v, !want, want)
		}
	}
}

// TestFixturesSessionsRevealed follows real agents' traffic: goose
// announces usage and commands for a session before its session/new
// response reveals the id; the others speak of a session only after.
func TestFixturesSessionsRevealed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no fixtures in %s (the shared folder is absent on a user's clone)", fixtureDir)
	}
	wantEarly := map[string]int{"goose-1.37.0.json": 2}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			msgs := loadDevtools(t, name)
			peer := Pair(msgs)
			sessions := map[string]bool{}
			early := 0
			for i, m := range msgs {
				switch {
				case (m.Kind == wire.KindResponse || m.Kind == wire.KindError) && peer[i] >= 0 && m.Session != "":
					sessions[m.Session] = true
				case m.Kind == wire.KindNotification && m.Method == "session/update" && m.Session != "" && !sessions[m.Session]:
					early++
				}
			}
			if early != wantEarly[name] {
				t.Errorf("%d updates before their session was revealed, want %d", early, wantEarly[name])
			}
		})
	}
}
