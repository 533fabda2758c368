package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"
)

// fixtureDir holds real traffic exported by acp-devtools from real agents.
const fixtureDir = "../../shared/fixtures/acp-devtools-handshakes"

type devtoolsExport struct {
	Messages []struct {
		Direction string `json:"direction"`
		Kind      string `json:"kind"`
		Raw       string `json:"raw"`
		Method    string `json:"method"`
	} `json:"messages"`
}

func loadFixtures(t *testing.T) map[string]devtoolsExport {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no fixtures in %s (the shared folder is absent on a user's clone)", fixtureDir)
	}
	out := map[string]devtoolsExport{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var exp devtoolsExport
		if err := json.Unmarshal(data, &exp); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = exp
	}
	return out
}

// fixtureUnanswered are what the real traffic shows beyond kinds and
// methods, written down from reading it: opencode and qwen-code never
// answered session/new in their captures.
var fixtureUnanswered = map[string][]string{
	"opencode-1.17.4.json":  {"session/new"},
	"qwen-code-0.17.1.json": {"session/new"},
}

// TestFixturesClassifyAndPair runs real agents' traffic through Classify
// and Pairer: every kind and method agrees with what acp-devtools saw and
// every response pairs with a request.
func TestFixturesClassifyAndPair(t *testing.T) {
	for name, exp := range loadFixtures(t) {
		t.Run(name, func(t *testing.T) {
			p := NewPairer[string]() // the request's method
			for i, m := range exp.Messages {
				dir := DirClient
				if m.Direction == "agent-to-editor" {
					dir = DirAgent
				}
				msg := Classify([]byte(m.Raw))
				if got := msg.Kind.String(); got != m.Kind {
					t.Fatalf("message %d: kind %s, acp-devtools saw %s: %s", i, got, m.Kind, m.Raw)
				}
				if msg.Method != m.Method {
					t.Errorf("message %d: method %q, want %q", i, msg.Method, m.Method)
				}
				switch msg.Kind {
				case KindRequest:
					p.Request(dir, msg.ID, msg.Method)
				case KindResponse, KindError:
					if _, ok := p.Response(dir, msg.ID); !ok {
						t.Fatalf("message %d: response id %s pairs with no request", i, msg.ID)
					}
				}
			}
			var left []string
			left = append(left, p.Outstanding()...)
			if want := fixtureUnanswered[name]; !slices.Equal(left, want) {
				t.Errorf("requests never answered: %q, want %q", left, want)
			}
		})
	}
}

// FuzzClassify checks that Classify never panics, that member spans stay
// inside the frame, and that ids and results are slices of the frame.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b","params":{"sessionId":"x"}}]`,
		`{"jsonrpc":"2.0","id":"\u0031","error":{"code":-32601,"message":"m"}}`,
		"{\"a\":\"\xff\"}", `[]`, `[1,[2],{"id":3}]`, "\r", `{"\"":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m := Classify(line)
		if m.Kind == KindUnknown || m.Kind == KindStderr {
			t.Fatalf("Classify returned %v", m.Kind)
		}
		for _, mem := range m.Members {
			if mem.Start < 0 || mem.End > len(line) || mem.Start >= mem.End {
				t.Fatalf("member span [%d,%d) outside frame of %d bytes", mem.Start, mem.End, len(line))
			}
			if !json.Valid(line[mem.Start:mem.End]) {
				t.Fatalf("member %q is not a JSON value", line[mem.Start:mem.End])
			}
		}
		if m.ID != nil && !json.Valid(m.ID) {
			t.Fatalf("id %q is not a JSON value", m.ID)
		}
		// Invalid JSON is exactly what encoding/json rejects.
		trimmed := bytes.Trim(bytes.TrimSuffix(line, []byte("\r")), " \t\n\r")
		if utf8.Valid(line) && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
			if (m.Kind == KindInvalidJSON) == json.Valid(trimmed) {
				t.Fatalf("Classify(%q) = %v but encoding/json.Valid = %v", line, m.Kind, json.Valid(trimmed))
			}
		}
	})
}
