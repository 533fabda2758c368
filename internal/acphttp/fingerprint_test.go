package acphttp

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"strings"
	"testing"
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
		fp := Fingerprint(secret)
		for _, h := range unkeyedHashes(secret) {
			if strings.Contains(fp, h) {
				t.Errorf("fingerprint of %q is %s: it holds an unkeyed hash (%s)", secret, fp, h)
			}
		}
		if !regexp.MustCompile(`^<redacted:hmac:[0-9a-f]{12}>$`).MatchString(fp) {
			t.Errorf("fingerprint of %q is %q, want <redacted:hmac:12 hex digits>", secret, fp)
		}
	}
	if x1, x2 := Fingerprint("x"), Fingerprint("x"); x1 != x2 || x1 == Fingerprint("y") {
		t.Error("fingerprints must tell tokens apart and match equal ones")
	}
	got := EnvelopeHeaders(http.Header{"X-Api-Key": {"xk-FAKE-1234567890"}})
	if v := got["x-api-key"]; !strings.HasPrefix(v, "<redacted:hmac:") {
		t.Errorf("X-Api-Key stored as %q, want a fingerprint", v)
	}
}
