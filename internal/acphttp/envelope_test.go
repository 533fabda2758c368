package acphttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestEnvelopeHeadersRedact(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer abc.def")
	h.Set("Cookie", "a=1; path=secret2")
	h.Add("Set-Cookie", "sid=secret3; Path=/; HttpOnly")
	h.Add("Set-Cookie", "b=secret4")
	h.Set("Sec-Websocket-Protocol", "acp, token.secret5")
	h.Set("Acp-Protocol-Version", "1")
	h.Set("Last-Event-Id", "9")
	got := EnvelopeHeaders(h)
	for k, v := range got {
		for _, s := range []string{"abc.def", "secret2", "secret3", "secret4", "secret5"} {
			if strings.Contains(v, s) {
				t.Errorf("%s keeps %q in clear: %q", k, s, v)
			}
		}
	}
	if !strings.HasPrefix(got["authorization"], "Bearer <redacted:hmac:") {
		t.Errorf("authorization: %q", got["authorization"])
	}
	if !strings.HasPrefix(got["set-cookie"], "sid=<redacted") || !strings.Contains(got["set-cookie"], "; Path=/; HttpOnly, b=<redacted") {
		t.Errorf("set-cookie: %q", got["set-cookie"])
	}
	if got["acp-protocol-version"] != "1" || got["last-event-id"] != "9" {
		t.Errorf("plain headers lost: %v", got)
	}
	// A token redacts alike in every record, so a reader can tell which
	// one a request carried, and two tokens redact differently.
	redacted := func(token string) string {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+token)
		return EnvelopeHeaders(h)["authorization"]
	}
	if again := redacted("abc.def"); again != got["authorization"] {
		t.Errorf("the same token redacted as %q, then %q", got["authorization"], again)
	}
	if redacted("abc.def") == redacted("abc.deg") {
		t.Errorf("two tokens redacted alike: %q", redacted("abc.def"))
	}
}
