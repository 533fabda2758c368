package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// fixtureDir holds real traffic exported by acp-devtools; it lives beside
// the repository and is absent on a user's clone.
const fixtureDir = "../../shared/fixtures/acp-devtools-handshakes"

// loadDevtools reads an acp-devtools export: messages[].raw is the exact
// line, direction "editor-to-agent" or "agent-to-editor".
func loadDevtools(t testing.TB, name string) []Msg {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if os.IsNotExist(err) {
		t.Skipf("fixture %s absent (it lives in ../shared/fixtures beside the repository)", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	var export struct {
		Messages []struct {
			Seq       uint64 `json:"seq"`
			Timestamp int64  `json:"timestamp"`
			Direction string `json:"direction"`
			Raw       string `json:"raw"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &export); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	msgs := make([]Msg, 0, len(export.Messages))
	for _, m := range export.Messages {
		dir := wire.DirClient
		if m.Direction == "agent-to-editor" {
			dir = wire.DirAgent
		}
		msg := FromLine(m.Seq, dir, []byte(m.Raw))
		msg.Time = m.Timestamp * 1e6
		msgs = append(msgs, msg)
	}
	return msgs
}
