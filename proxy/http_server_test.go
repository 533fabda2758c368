package proxy

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestListen(t *testing.T) {
	l, err := Listen(ListenOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = Listen(ListenOptions{Addr: addr})
	if !errors.Is(err, ErrAddrInUse) || !strings.HasPrefix(err.Error(), addr+" is in use; pick another --listen port") {
		t.Fatalf("second listener: %v", err)
	}
	var warned []string
	l2, err := Listen(ListenOptions{Addr: "0.0.0.0:0", Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	l2.Close()
	if len(warned) != 1 || !strings.Contains(warned[0], "not a loopback address") {
		t.Fatalf("non-loopback listen warned %q", warned)
	}
	l3, err := Listen(ListenOptions{Addr: ":0", Warn: func(s string) { t.Errorf("warned for the default host: %s", s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if !IsLoopback(l3.Addr().String()) {
		t.Fatalf("an empty host listened on %s, want loopback", l3.Addr())
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8700": true, "[::1]:8700": true, "localhost:1": true,
		"0.0.0.0:8700": false, "192.168.1.2:80": false, "example.com:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

func TestEnvelopeHeadersRedact(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer abc.def")
	h.Set("Cookie", "a=1; path=secret2")
	h.Add("Set-Cookie", "sid=secret3; Path=/; HttpOnly")
	h.Add("Set-Cookie", "b=secret4")
	h.Set("Sec-Websocket-Protocol", "acp, token.secret5")
	h.Set("Acp-Protocol-Version", "1")
	h.Set("Last-Event-Id", "9")
	got := envelopeHeaders(h)
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
		return envelopeHeaders(h)["authorization"]
	}
	if again := redacted("abc.def"); again != got["authorization"] {
		t.Errorf("the same token redacted as %q, then %q", got["authorization"], again)
	}
	if redacted("abc.def") == redacted("abc.deg") {
		t.Errorf("two tokens redacted alike: %q", redacted("abc.def"))
	}
}
