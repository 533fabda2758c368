package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// TestExportCarriesNoFingerprint runs credentials through the real proxy
// into a capture and exports it in every way: no export holds a
// fingerprint (a hash of a secret), redacted or not, and labels still
// tell the same token from another.
func TestExportCarriesNoFingerprint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "http"}})
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
		map[string]string{"Authorization": "Bearer wrong"})
	netkit.ReadAll(t, resp.Body)
	for id, tok := range []string{"wrong", "other-token"} {
		resp = netkit.Post(t, c, front.URL+"/acp", `{"jsonrpc":"2.0","id":`+string(rune('2'+id))+`,"method":"session/new","params":{}}`,
			map[string]string{acphttp.HeaderConnectionID: "conn-1", "Authorization": "Bearer " + tok, "Cookie": "sid=" + tok})
		netkit.ReadAll(t, resp.Body)
	}
	p.Close()
	front.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fp := regexp.MustCompile(`(sha256|hmac):[0-9a-f]{6,}`)
	for _, noRedact := range []bool{false, true} {
		var out bytes.Buffer
		if _, err := capture.ExportJSONL(src, &out, capture.ExportOptions{NoRedact: noRedact}); err != nil {
			t.Fatal(err)
		}
		if m := fp.Find(out.Bytes()); m != nil {
			t.Errorf("JSONL export (no-redact %v) carries the fingerprint %s", noRedact, m)
		}
		sum := sha256.Sum256([]byte("wrong"))
		if h := hex.EncodeToString(sum[:4]); bytes.Contains(out.Bytes(), []byte(h)) {
			t.Errorf("JSONL export (no-redact %v) carries %s, a hash of the token", noRedact, h)
		}
		if noRedact {
			continue
		}
		// The first two POSTs used one token, the third another.
		auth := regexp.MustCompile(`"authorization":"Bearer \\u003credacted:token#(\d)\\u003e"`).FindAllSubmatch(out.Bytes(), -1)
		var labels []string
		for _, m := range auth {
			labels = append(labels, string(m[1]))
		}
		if len(labels) < 3 || labels[0] != labels[1] || labels[1] == labels[len(labels)-1] {
			t.Errorf("authorization labels %v: want the same label twice, then another", labels)
		}
	}
	dst := filepath.Join(t.TempDir(), "bug.acpscope")
	if _, err := capture.Export(src, dst, capture.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := fp.Find(readFile(t, dst)); m != nil {
		t.Errorf("capture export carries the fingerprint %s", m)
	}
}
