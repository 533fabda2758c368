package acphttp

import (
	"crypto/tls"
	"net/http"
	"strings"
)

// NewTransports returns the upstream transports: one for HTTP/1.1 (and
// HTTP/2 negotiated over TLS), one for cleartext HTTP/2 with prior
// knowledge, used when the client spoke h2c to us. Compression stays off
// so the bytes the client receives are the bytes the upstream sent.
func NewTransports(insecure bool) (h1, h2c *http.Transport) {
	base := baseTransport(insecure)
	h1 = base.Clone()
	var p1 http.Protocols
	p1.SetHTTP1(true)
	p1.SetHTTP2(true)
	h1.Protocols = &p1
	h2c = base.Clone()
	var p2 http.Protocols
	p2.SetUnencryptedHTTP2(true)
	p2.SetHTTP2(true)
	h2c.Protocols = &p2
	return h1, h2c
}

// baseTransport is the transport the others start from: no proxy from
// the environment, no compression, no response header timeout (streams
// may wait long for their first event).
func baseTransport(insecure bool) *http.Transport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = nil
	base.DisableCompression = true
	base.TLSClientConfig = TLSClientConfig(insecure)
	base.ResponseHeaderTimeout = 0
	return base
}

// TLSClientConfig is the upstream TLS configuration; insecure skips
// certificate verification (--unsafe-upstream-insecure).
func TLSClientConfig(insecure bool) *tls.Config {
	return &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
}

// HTTP1Transport speaks only HTTP/1.1, over TLS too: its ALPN offers
// nothing else. (A clone of a transport that has offered h2 keeps
// offering it: Clone fixes the ALPN list first.)
func HTTP1Transport(insecure bool) *http.Transport {
	t := baseTransport(insecure)
	t.TLSClientConfig.NextProtos = []string{"http/1.1"}
	var p http.Protocols
	p.SetHTTP1(true)
	t.Protocols = &p
	return t
}

// IsJSON reports whether a Content-Type names JSON.
func IsJSON(contentType string) bool {
	return strings.Contains(strings.ToLower(contentType), "json")
}

func IsEventStream(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream")
}
