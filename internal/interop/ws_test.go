package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/wire"
)

// TestTSWebSocketThroughProxy loads a session over WebSocket with the
// official TypeScript SDK on both ends, through `acpscope proxy`. Both
// ends use the `ws` package, which agrees on permessage-deflate with
// context takeover: the proxy must let them agree on it, carry their
// compressed frames, and record every message decoded.
func TestTSWebSocketThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the TypeScript SDK's WebSocket peers (a few seconds); skipped with -short")
	}
	goTools(t)
	dir := tsPeers(t)
	upstream := startTSServer(t, dir, "ws-server.mjs")
	capturePath := filepath.Join(t.TempDir(), "proxy.acpscope")
	prox, url, proxyLog := startListening(t, "proxy", "--upstream", upstream, "--capture", capturePath)

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	node := exec.CommandContext(ctx, "node", filepath.Join(dir, "ws-client.mjs"), "ws"+strings.TrimPrefix(url, "http"), "sess_old")
	node.Dir = dir
	var nodeErr testkit.Buffer
	node.Stderr = &nodeErr
	out, err := node.Output()
	var seen struct {
		Extensions string   `json:"extensions"`
		Events     []string `json:"events"`
		Failure    *string  `json:"failure"`
	}
	if jerr := json.Unmarshal([]byte(lastLine(string(out))), &seen); jerr != nil || err != nil || seen.Failure != nil {
		t.Fatalf("the TypeScript WebSocket client: %v, report %q (%v)\nstderr:\n%s\nproxy:\n%s", err, out, jerr, nodeErr.String(), proxyLog.String())
	}
	if !strings.HasPrefix(seen.Extensions, "permessage-deflate") {
		t.Errorf("extensions agreed through the proxy: %q, want permessage-deflate", seen.Extensions)
	}
	want := "update sess_old user_message_chunk 26,update sess_old agent_message_chunk 7800,update sess_old agent_message_chunk 7800,loaded"
	if got := strings.Join(seen.Events, ","); got != want {
		t.Errorf("the client saw %q, want %q", got, want)
	}
	stopListening(t, prox)

	r, err := capture.Open(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var long, load int
	err = r.Scan(1, func(rec *capture.Record) bool {
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatalf("body of record %d: %v", rec.Seq, err)
		}
		if rec.Flags&(wire.FlagBinary|wire.FlagTruncated) != 0 {
			t.Errorf("record %d flagged %v: %.80s", rec.Seq, rec.Flags, body)
		}
		switch {
		case rec.Dir == wire.DirAgent && strings.Contains(string(body), strings.Repeat("A restored answer that repeats itself. ", 200)):
			long++
		case rec.Dir == wire.DirClient && strings.Contains(string(body), `"method":"session/load"`) &&
			strings.Contains(string(body), strings.Repeat("padding that makes this request worth compressing ", 100)):
			load++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if long != 2 || load != 1 {
		d, _ := exec.Command(tools.acpscope, "dump", capturePath).CombinedOutput()
		t.Errorf("recorded decoded: %d long updates (want 2), %d session/load (want 1)\n%s", long, load, d)
	}
}
