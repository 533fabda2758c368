package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		kind    Kind
		id      string
		method  string
		session string
		flags   Flags
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, KindRequest, "1", "initialize", "", 0},
		{"string id", `{"jsonrpc":"2.0","id":"a\"b","method":"x"}`, KindRequest, `"a\"b"`, "x", "", 0},
		{"null id request", `{"jsonrpc":"2.0","id":null,"method":"x"}`, KindRequest, "null", "x", "", 0},
		{"notification with session", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionId":"no"},"sessionId":"s1"}}`, KindNotification, "", "session/update", "s1", 0},
		{"duplicate sessionId: the last counts", `{"jsonrpc":"2.0","method":"m","params":{"sessionId":"a","sessionId":"b"}}`, KindNotification, "", "m", "b", 0},
		{"duplicate params: the last counts", `{"jsonrpc":"2.0","method":"m","params":{"sessionId":"a"},"params":[1]}`, KindNotification, "", "m", "", 0},
		{"sessionId not a string", `{"jsonrpc":"2.0","method":"m","params":{"sessionId":7}}`, KindNotification, "", "m", "", 0},
		{"escaped sessionId", `{"jsonrpc":"2.0","method":"m","params":{"sessionId":"s\u0031"}}`, KindNotification, "", "m", "s1", 0},
		{"response", `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s9"}}`, KindResponse, "2", "", "", 0},
		{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}`, KindError, "3", "", "", 0},
		{"case matters", `{"jsonrpc":"2.0","ID":3,"Method":"x"}`, KindNonProtocol, "", "", "", 0},
		{"escaped key", `{"jsonrpc":"2.0","\u0069d":4,"result":null}`, KindResponse, "4", "", "", 0},
		{"bad version", `{"jsonrpc":"1.0","id":1,"result":{}}`, KindResponse, "1", "", "", FlagBadVersion},
		{"crlf", "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r", KindNotification, "", "n", "", FlagCRLF},
		{"invalid json", `{"jsonrpc":"2.0",`, KindInvalidJSON, "", "", "", 0},
		{"log line", `INFO starting agent`, KindNonProtocol, "", "", "", 0},
		{"empty", ``, KindNonProtocol, "", "", "", FlagEmpty},
		{"invalid utf8", "{\"a\":\"\xff\"}", KindInvalidUTF8, "", "", "", 0},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, KindBatch, "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Classify([]byte(tt.line))
			if m.Kind != tt.kind || string(m.ID) != tt.id || m.Method != tt.method || m.SessionID != tt.session || m.Flags != tt.flags {
				t.Errorf("Classify(%q) = kind %v id %q method %q session %q flags %v; want %v %q %q %q %v",
					tt.line, m.Kind, m.ID, m.Method, m.SessionID, m.Flags, tt.kind, tt.id, tt.method, tt.session, tt.flags)
			}
		})
	}
}

func TestClassifyBatchMembers(t *testing.T) {
	line := ` [{"jsonrpc":"2.0","id":1,"method":"a"}, 5 ,{"jsonrpc":"2.0","method":"b"}]`
	m := Classify([]byte(line))
	if m.Kind != KindBatch || len(m.Members) != 3 {
		t.Fatalf("got kind %v with %d members", m.Kind, len(m.Members))
	}
	want := []struct {
		text string
		kind Kind
	}{{`{"jsonrpc":"2.0","id":1,"method":"a"}`, KindRequest}, {`5`, KindNonProtocol}, {`{"jsonrpc":"2.0","method":"b"}`, KindNotification}}
	for i, w := range want {
		got := m.Members[i]
		if line[got.Start:got.End] != w.text || got.Kind != w.kind || got.Flags&FlagBatchMember == 0 {
			t.Errorf("member %d = %q %v, want %q %v", i, line[got.Start:got.End], got.Kind, w.text, w.kind)
		}
	}
}

// TestClassifyInvalidObjects covers the ways an object can go wrong after
// its members have started to be read.
func TestClassifyInvalidObjects(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,}`, `{"id" 1}`, `{"id":1 "method":"x"}`, `{,}`, `{"id":1}}`,
		`{"id":1}x`, `{"id":}`, `{"id":1,"method":"x"`, `{id:1}`, `{"id":1,,"x":2}`, `{"a":"\q"}`,
		`{"params":{"sessionId":"s",}}`, `{"params":{"sessionId" "s"}}`, `{"params":{"a":1}`, `{"params":{"a":1}}}`,
		`{"params":{"a":1},}`, `{"params":{`, `{"params":{}`,
	} {
		if m := Classify([]byte(line)); m.Kind != KindInvalidJSON {
			t.Errorf("Classify(%s) = %v, want invalid-json", line, m.Kind)
		}
	}
	for _, line := range []string{`{}`, ` { } `, `{"a":{}}`, `{"jsonrpc":"2.0","method":"m","params":[1,{"x":[]}]}`,
		`{"params":{}}`, `{"params": { } ,"id":1}`, `{"params":{"sessionId":{"sessionId":"x"}}}`} {
		if m := Classify([]byte(line)); m.Kind == KindInvalidJSON {
			t.Errorf("Classify(%s) = invalid-json, but it is valid", line)
		}
	}
}

// TestClassifyOnlyJSONWhiteSpace: a frame is trimmed of JSON's white space
// alone, so other Unicode spaces make it invalid and member spans still
// index the frame whatever white space leads it.
func TestClassifyOnlyJSONWhiteSpace(t *testing.T) {
	for _, line := range []string{
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\v", "{\"id\":1,\"result\":2}\u00a0", "{\"id\":1,\"result\":2}\f",
		"[{\"id\":1,\"result\":2}]\u0085",
	} {
		if m := Classify([]byte(line)); m.Kind != KindInvalidJSON {
			t.Errorf("Classify(%q) = %v, want invalid-json", line, m.Kind)
		}
	}
	for _, line := range []string{"\n[{\"id\":1,\"result\":2}]", " \r\n\t[{\"id\":1,\"result\":2}]"} {
		m := Classify([]byte(line))
		if m.Kind != KindBatch || len(m.Members) != 1 {
			t.Fatalf("Classify(%q) = %v with %d members", line, m.Kind, len(m.Members))
		}
		if got := line[m.Members[0].Start:m.Members[0].End]; got != `{"id":1,"result":2}` {
			t.Errorf("Classify(%q): member span holds %q", line, got)
		}
	}
}

// TestClassifyDepthLimit: nesting is counted from the message itself, so a
// message is valid exactly when encoding/json says so, however deep the
// nesting sits inside params.
func TestClassifyDepthLimit(t *testing.T) {
	for _, tt := range []struct {
		name, head, tail string
	}{
		{"in params", `{"jsonrpc":"2.0","method":"m","params":`, `}`},
		{"inside params", `{"jsonrpc":"2.0","method":"m","params":{"x":`, `}}`},
		{"in result", `{"jsonrpc":"2.0","id":1,"result":`, `}`},
	} {
		for _, n := range []int{maxDepth - 3, maxDepth - 2, maxDepth - 1, maxDepth} {
			line := []byte(tt.head + strings.Repeat("[", n) + strings.Repeat("]", n) + tt.tail)
			m := Classify(line)
			if valid := m.Kind != KindInvalidJSON; valid != json.Valid(line) {
				t.Errorf("%s, %d nested arrays: Classify says %v, encoding/json.Valid %v", tt.name, n, m.Kind, json.Valid(line))
			}
		}
	}
}
