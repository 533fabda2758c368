package bridge

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
)

// h2cProbeWait bounds the cleartext HTTP/2 probe: dialling, sending the
// connection preface and reading the server's first bytes.
const h2cProbeWait = 10 * time.Second

// h2Preface is the HTTP/2 client connection preface followed by an empty
// SETTINGS frame (RFC 9113 §3.4, §6.5).
var h2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")

// transport picks how connect speaks Streamable HTTP and says why:
// forced by --http1 or --h2c; over TLS, what ALPN negotiates (HTTP/2
// when the server offers it); in clear, cleartext HTTP/2 with prior
// knowledge when a probe finds the server speaks it, else HTTP/1.1.
func (b *connector) transport(ctx context.Context) (http.RoundTripper, string) {
	if b.opts.HTTP1 {
		return acphttp.HTTP1Transport(b.opts.UnsafeInsecure), "--http1"
	}
	h1, h2c := acphttp.NewTransports(b.opts.UnsafeInsecure)
	switch {
	case b.url.Scheme == "https":
		return h1, "negotiated through TLS"
	case b.opts.H2C:
		return h2c, "--h2c"
	case speaksH2C(ctx, hostPort(b.url)):
		return h2c, "cleartext HTTP/2 with prior knowledge"
	}
	return h1, "the server does not speak cleartext HTTP/2; the RFD requires HTTP/2"
}

// speaksH2C reports whether the server at addr answers the HTTP/2
// connection preface with a SETTINGS frame, as an HTTP/2 server must
// (RFC 9113 §3.4). It sends no ACP request: an HTTP/1.1 server sees
// "PRI * HTTP/2.0" and answers an error (Go servers hand it to their
// handler, which serve and proxy answer 404 unrecorded: its path is not
// the endpoint), or closes.
func speaksH2C(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, h2cProbeWait)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false // the first request reports why
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if _, err := conn.Write(h2Preface); err != nil {
		return false
	}
	var frame [9]byte
	if _, err := io.ReadFull(conn, frame[:]); err != nil {
		return false
	}
	// A SETTINGS frame (type 4) on stream 0; an HTTP/1.1 answer starts
	// with "HTTP/1.1 ", whose fourth byte is 'P'.
	return frame[3] == 0x4 && bytes.Equal(frame[5:9], []byte{0, 0, 0, 0})
}

// hostPort returns the URL's host with its port, defaulted by scheme.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
