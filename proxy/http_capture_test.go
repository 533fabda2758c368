package proxy

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// TestHTTPProxyRealCapture runs the RFD flow through the proxy into a real
// capture file and reads it back: every message with its envelope, the
// initialize pair matched, credentials nowhere in the file in clear.
func TestHTTPProxyRealCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true,
		Meta: capture.Meta{Transport: "http", Upstream: "test", Listen: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	up := netkit.NewFakeUpstream()
	upSrv := netkit.StartServer(t, netkit.H1, up)
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	front := netkit.StartServer(t, netkit.H1, p)
	c := netkit.ClientFor(t, netkit.H1, front)
	resp := netkit.Post(t, c, front.URL+"/acp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		map[string]string{"Authorization": "Bearer s3cret-token"})
	netkit.ReadAll(t, resp.Body)
	resp = netkit.Post(t, c, front.URL+"/acp", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`,
		map[string]string{acphttp.HeaderConnectionID: "conn-1", "Cookie": "sticky=node-7"})
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("session/new: %d", resp.StatusCode)
	}
	p.Close()
	front.Close() // every handler has returned, so every frame is handed over
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	var initReq, initResp capture.Record
	r.Scan(1, func(rec *capture.Record) bool {
		if rec.HTTP == nil {
			t.Errorf("record %d has no envelope", rec.Seq)
			return true
		}
		got = append(got, rec.Dir.String()+" "+rec.HTTP.Method+" "+rec.HTTP.Stream+" "+rec.Kind.String()+" "+rec.Method)
		if rec.Method == "initialize" && rec.Dir == wire.DirClient {
			initReq = *rec
		}
		if rec.Method == "initialize" && rec.Dir == wire.DirAgent {
			initResp = *rec
		}
		return true
	})
	want := []string{
		"client POST post request initialize",
		"agent POST post-reply response initialize",
		"client POST post request session/new",
		"agent POST http non-protocol ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if initReq.Peer == 0 || initReq.Peer != initResp.Seq {
		t.Errorf("initialize not paired: request peer %d, response seq %d", initReq.Peer, initResp.Seq)
	}
	raw := readFile(t, path)
	for _, secret := range []string{"s3cret-token", "node-7"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("capture file holds %q in clear", secret)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
