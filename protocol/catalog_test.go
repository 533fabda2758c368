package protocol

import (
	"testing"

	"github.com/acpscope/acpscope/wire"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name          string
		known         bool
		stability     Stability
		notification  bool
		sessionScoped bool
		from          wire.Dir
	}{
		{"initialize", true, Stable, false, false, wire.DirClient},
		{"session/prompt", true, Stable, false, true, wire.DirClient},
		{"session/cancel", true, Stable, true, true, wire.DirClient},
		{"session/update", true, Stable, true, true, wire.DirAgent},
		{"fs/read_text_file", true, Stable, false, true, wire.DirAgent},
		{"$/cancel_request", true, Stable, true, false, wire.DirAgent},
		{"session/set_model", true, Legacy, false, true, wire.DirClient},
		{"session/fork", true, Unstable, false, true, wire.DirClient},
		{"auth/login", true, V2Draft, false, false, wire.DirClient},
		{"_zed.dev/foo", true, Extension, false, false, wire.DirAgent},
		{"agents/run", true, PreAlpha, false, false, wire.DirClient},
		{"nes/future", true, Unstable, false, false, wire.DirClient},
		{"session/unknown", false, Unknown, false, false, wire.DirClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Lookup(tt.name)
			if ok != tt.known || m.Stability != tt.stability || m.Notification != tt.notification || m.SessionScoped != tt.sessionScoped {
				t.Fatalf("Lookup(%q) = %+v, %v", tt.name, m, ok)
			}
			if ok && !m.Sender.Allows(tt.from) {
				t.Errorf("%s not allowed from %s", tt.name, tt.from)
			}
		})
	}
}

func TestLookupVersion(t *testing.T) {
	tests := []struct {
		name      string
		version   int
		inVersion bool
	}{
		{"fs/read_text_file", 1, true},
		{"fs/read_text_file", 2, false},
		{"session/load", 2, false},
		{"session/set_mode", 2, false},
		{"auth/login", 1, false},
		{"auth/login", 2, true},
		{"session/prompt", 2, true},
		{"_x/y", 2, true},
		{"elicitation/create", 2, true},
		{"session/fork", 2, true},
		{"session/setTitle", 2, false},
	}
	for _, tt := range tests {
		if _, _, in := LookupVersion(tt.name, tt.version); in != tt.inVersion {
			t.Errorf("LookupVersion(%q, %d) in version = %v, want %v", tt.name, tt.version, in, tt.inVersion)
		}
	}
}

func TestUpdateKind(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`, "plan"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"kind":"message"}}}`, ""},
		{`{"jsonrpc":"2.0","method":"session/update"}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		if got := UpdateKind([]byte(tt.body)); got != tt.want {
			t.Errorf("UpdateKind(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
	if s, ok := LookupUpdate("compaction_update"); !ok || s != Unstable {
		t.Errorf("compaction_update: %v %v", s, ok)
	}
	if _, ok := LookupUpdate("made_up"); ok {
		t.Error("made_up variant known")
	}
}
