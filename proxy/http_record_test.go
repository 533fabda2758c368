package proxy

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
)

// unkeyedHashes are the hex digests anyone can compute from a guess.
func unkeyedHashes(secret string) []string {
	s256 := sha256.Sum256([]byte(secret))
	s1 := sha1.Sum([]byte(secret))
	m5 := md5.Sum([]byte(secret))
	return []string{hex.EncodeToString(s256[:4]), hex.EncodeToString(s1[:4]), hex.EncodeToString(m5[:4])}
}

// TestFingerprintIsKeyed: a stored credential fingerprint is no hash of
// the credential that a guess could reproduce (before, "wrong" was
// stored as <redacted:sha256:8810ad58>, sha256("wrong")).
func TestFingerprintIsKeyed(t *testing.T) {
	for _, secret := range []string{"wrong", "hunter2", "s3cret-token"} {
		fp := fingerprint(secret)
		for _, h := range unkeyedHashes(secret) {
			if strings.Contains(fp, h) {
				t.Errorf("fingerprint of %q is %s: it holds an unkeyed hash (%s)", secret, fp, h)
			}
		}
		if !regexp.MustCompile(`^<redacted:hmac:[0-9a-f]{12}>$`).MatchString(fp) {
			t.Errorf("fingerprint of %q is %q, want <redacted:hmac:12 hex digits>", secret, fp)
		}
	}
	if x1, x2 := fingerprint("x"), fingerprint("x"); x1 != x2 || x1 == fingerprint("y") {
		t.Error("fingerprints must tell tokens apart and match equal ones")
	}
	got := envelopeHeaders(http.Header{"X-Api-Key": {"xk-FAKE-1234567890"}})
	if v := got["x-api-key"]; !strings.HasPrefix(v, "<redacted:hmac:") {
		t.Errorf("X-Api-Key stored as %q, want a fingerprint", v)
	}
}

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
	up := newFakeUpstream(t)
	upSrv := startServer(t, protoH1, up)
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	front := startServer(t, protoH1, p)
	c := clientFor(t, protoH1, front)
	resp := post(t, c, front.URL+"/acp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		map[string]string{"Authorization": "Bearer wrong"})
	readAll(t, resp.Body)
	for id, tok := range []string{"wrong", "other-token"} {
		resp = post(t, c, front.URL+"/acp", `{"jsonrpc":"2.0","id":`+string(rune('2'+id))+`,"method":"session/new","params":{}}`,
			map[string]string{HeaderConnectionID: "conn-1", "Authorization": "Bearer " + tok, "Cookie": "sid=" + tok})
		readAll(t, resp.Body)
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
		for _, h := range unkeyedHashes("wrong") {
			if bytes.Contains(out.Bytes(), []byte(h)) {
				t.Errorf("JSONL export (no-redact %v) carries %s, a hash of the token", noRedact, h)
			}
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
