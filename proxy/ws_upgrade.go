package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
)

// serveWebSocketBytes joins a client WebSocket to an upstream one byte
// for byte (ws_relay.go). The client's upgrade request goes upstream as
// it came, key and offered extensions included, with only what
// forUpstream rewrites; the upstream's answer, 101 or refusal, comes
// back as it was sent. So the two ends agree on the protocol, extensions
// and accept key between themselves, as if no proxy stood between them.
func (p *HTTPProxy) serveWebSocketBytes(w http.ResponseWriter, r *http.Request) {
	conn := p.conns.Fresh()
	env := wsEnvelope(r)
	up, fromAgent, resp, err := p.dialWebSocket(r)
	if err != nil {
		p.refuseWebSocket(w, r, conn, nil, err, env)
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer up.Close()
		p.refuseWebSocket(w, r, conn, resp, nil, env)
		return
	}
	connID := resp.Header.Get(acphttp.HeaderConnectionID)
	p.conns.Bind(connID, conn)
	down, fromClient, err := switchProtocols(w, resp)
	if err != nil {
		up.Close()
		return
	}
	p.recordSwitch(conn, env, resp.Header, connID)
	if !p.trackWS(up, down) {
		return
	}
	defer p.untrackWS(up, down)
	relay := &byteRelay{rec: p.rec, conn: conn, limit: min(p.maxMessage, math.MaxInt), warn: p.warn, env: wsStreamEnvelope(env, connID)}
	relay.msgEnv = relay.env()
	if relay.gather = recordsMessages(p.rec); relay.gather {
		relay.lender, _ = p.rec.(tap.Borrower)
	}
	relay.held = &p.held.msgBufs
	if relay.gather && agreedDeflate(resp.Header) {
		relay.deflate = newDeflateRecorder(relay)
	}
	relay.run(&wsSide{c: down}, &wsSide{c: up, masked: true}, fromClient, fromAgent)
}

// maxHandshakeBytes bounds the upstream's answer to an upgrade, as
// net/http bounds a request's headers.
const maxHandshakeBytes = http.DefaultMaxHeaderBytes

// dialWebSocket opens a connection to the upstream (TLS for https),
// sends it the client's upgrade request and reads the answer's headers,
// all within the handshake timeout. The reader it returns holds what the
// upstream sent after them.
func (p *HTTPProxy) dialWebSocket(r *http.Request) (net.Conn, *bufio.Reader, *http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), p.dialer.HandshakeTimeout)
	defer cancel()
	target := p.upstreamURL(r)
	c, err := p.dialUpstream(ctx, target)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) }) // unblock on timeout or a client gone
	defer stop()
	capped := &cappedReader{r: c, left: maxHandshakeBytes}
	br := bufio.NewReaderSize(capped, acphttp.WSBufferSize)
	resp, err := sendUpgrade(c, br, target, p.upgradeHeader(r))
	if err == nil && !stop() {
		err = ctx.Err()
	}
	if err != nil {
		c.Close()
		return nil, nil, nil, err
	}
	capped.left = -1
	if resp.StatusCode != http.StatusSwitchingProtocols {
		// A refusal's body is read within a handshake timeout of its own,
		// and up to the message limit.
		c.SetDeadline(time.Now().Add(p.dialer.HandshakeTimeout))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, p.maxMessage), resp.Body}
		return c, br, resp, nil
	}
	c.SetDeadline(time.Time{})
	return c, br, resp, nil
}

// upstreamURL is where an upgrade on our endpoint goes, in http(s) form.
func (p *HTTPProxy) upstreamURL(r *http.Request) *url.URL {
	u := *p.upstream
	u.RawQuery = joinQuery(p.upstream.RawQuery, r.URL.RawQuery)
	return &u
}

// dialUpstream connects to target's host, through TLS offering only
// HTTP/1.1 for https (an upgrade needs it).
func (p *HTTPProxy) dialUpstream(ctx context.Context, target *url.URL) (net.Conn, error) {
	addr := target.Host
	if target.Port() == "" {
		addr = net.JoinHostPort(target.Hostname(), map[string]string{"http": "80", "https": "443"}[target.Scheme])
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || target.Scheme != "https" {
		return c, err
	}
	cfg := p.dialer.TLSClientConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = target.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// upgradeHeader is the client's request header as the upstream gets it:
// hop-by-hop headers other than the upgrade's own dropped.
func (p *HTTPProxy) upgradeHeader(r *http.Request) http.Header {
	h := r.Header.Clone()
	for _, name := range []string{"Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding"} {
		h.Del(name)
	}
	p.forUpstream(h, r)
	return h
}

// sendUpgrade writes the upgrade request and reads the answer's headers.
func sendUpgrade(c net.Conn, br *bufio.Reader, target *url.URL, h http.Header) (*http.Response, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", target.RequestURI(), target.Host)
	h.Write(&b)
	b.WriteString("\r\n")
	if _, err := c.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return http.ReadResponse(br, &http.Request{Method: http.MethodGet})
}

// switchProtocols takes over the client's connection and passes the
// upstream's 101 on. The reader it returns holds what the client sent
// after its request.
func switchProtocols(w http.ResponseWriter, resp *http.Response) (net.Conn, *bufio.Reader, error) {
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(time.Time{})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", resp.Status)
	resp.Header.Write(&b)
	b.WriteString("\r\n")
	if _, err := c.Write(b.Bytes()); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, bufio.NewReaderSize(rw.Reader, acphttp.WSBufferSize), nil
}

// cappedReader fails once more than left bytes have been read from it;
// a negative left lifts the cap.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return c.r.Read(p)
	}
	if c.left == 0 {
		return 0, fmt.Errorf("the upstream's answer to the upgrade is over %d bytes", maxHandshakeBytes)
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	return n, err
}

// recordsMessages reports whether rec records what it is given: not so
// with capture off, where the proxy's recorder is tap.Discard.
func recordsMessages(rec tap.Recorder) bool {
	_, discard := rec.(tap.Discard)
	return !discard
}
