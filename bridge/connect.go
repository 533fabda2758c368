package bridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
)

// ConnectOptions configure Connect, the bridge that lets a stdio-only
// editor use a remote agent: JSON-RPC lines on Stdin/Stdout, Streamable
// HTTP or WebSocket towards the server.
type ConnectOptions struct {
	// URL is the server's endpoint: http(s):// for Streamable HTTP,
	// ws(s):// for WebSocket.
	URL string
	// AuthToken is sent as "Authorization: Bearer TOKEN".
	AuthToken string
	// H2C speaks cleartext HTTP/2 with prior knowledge to an http://
	// server without first probing whether it does; HTTP1 speaks only
	// HTTP/1.1, over TLS too. By default connect uses HTTP/2 where the
	// server offers it (the RFD requires it): through ALPN over TLS, and
	// in clear when a probe finds the server speaks it, else HTTP/1.1.
	H2C, HTTP1 bool
	// UnsafeInsecure skips TLS certificate verification.
	UnsafeInsecure bool
	Stdin          io.Reader
	Stdout         io.Writer
	// Recorder receives every message; nil records nothing.
	Recorder tap.Recorder
	// Intercept, when set, sees every whole message and decides what is
	// delivered (a fault plan, messages held or sent by hand), at the
	// editor's stdio side. Nil, the default, carries messages as they come.
	Intercept tap.Interceptor
	// Warn receives one line per problem worth telling the user.
	Warn func(string)
	// Info receives one line saying which HTTP version connect speaks,
	// and why; nil says nothing.
	Info func(string)
	// KeepAlive is the interval of pings on a WebSocket (0 means
	// DefaultKeepAlive, negative none): a server that answers none for
	// acphttp.PeerMissedPings intervals is lost.
	KeepAlive time.Duration
}

// Connect bridges stdio to the server until Stdin ends (it then ends the
// connection politely and returns nil) or the server is lost (it returns
// an error wrapping ErrConnectionLost). It never reconnects: the
// connection's state (sessions, pending requests) lives in the server,
// so a new connection could not continue the editor's conversation.
func Connect(ctx context.Context, opts ConnectOptions) error {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w %q: want http://HOST:PORT/acp or ws://HOST:PORT/acp", ErrUpstreamURL, opts.URL)
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if opts.Info == nil {
		opts.Info = func(string) {}
	}
	if opts.H2C && opts.HTTP1 {
		return errors.New("connect: H2C and HTTP1 both set; choose cleartext HTTP/2 or HTTP/1.1")
	}
	c := &connector{opts: opts, rec: tap.Or(opts.Recorder), url: u, lost: make(chan error, 1)}
	if opts.Intercept != nil {
		c.fullRec, c.rec = c.rec, statusOnly{c.rec}
	}
	c.jar, _ = cookiejar.New(nil)
	var l link
	switch u.Scheme {
	case "ws", "wss":
		l, err = c.dialWS(ctx)
	case "http", "https":
		l = c.openHTTP(ctx)
	default:
		return fmt.Errorf("%w %q: the scheme must be http, https, ws or wss", ErrUpstreamURL, opts.URL)
	}
	if err != nil {
		return err
	}
	return c.run(ctx, l)
}

// link is connect's connection to the server over one transport,
// Streamable HTTP (httpLink) or WebSocket (wsLink): what a message
// transport offers the bridge. Messages from the server are received by
// the link's own goroutines and handed to the connector's emit, in the
// order the link restores; a fatal problem is reported through the
// connector's fail.
type link interface {
	// send carries one editor message (a stdin line) to the server.
	send(msg []byte) error
	// close ends the connection, politely when clean (the editor closed
	// stdin: the server is told, and answers still due may arrive
	// first), and returns once the link's goroutines have ended or a
	// bound has passed.
	close(clean bool)
}

// run carries stdin to the link until stdin ends, the link is lost or ctx
// ends, then closes the link.
func (b *connector) run(ctx context.Context, l link) error {
	send := b.intercept(l)
	stdinDone := make(chan error, 1)
	go func() { stdinDone <- readLines(b.opts.Stdin, send) }() // stdin pump: ends at EOF or a fatal error
	var result error
	select {
	case result = <-stdinDone:
	case result = <-b.lost:
	case <-ctx.Done():
		result = ctx.Err()
	}
	if b.ic != nil && result == nil {
		b.ic.End(wire.DirClient) // what is held for the server goes first
	}
	l.close(result == nil)
	if b.ic != nil {
		b.ic.End(wire.DirAgent)
	}
	return result
}

// connector is the state shared by both links of connect.
type connector struct {
	opts ConnectOptions
	rec  tap.Recorder
	// Under interception: fullRec is the run's recorder, rec leaves
	// messages to the port; ic is the connection's interceptor.
	fullRec       tap.Recorder
	ic            tap.Conn
	closedByFault atomic.Bool
	url           *url.URL
	jar           http.CookieJar

	outMu sync.Mutex // one message at a time on stdout

	lostOnce sync.Once
	lost     chan error // receives the first fatal error
}

// emit writes one agent message to the editor as one line. A message
// that spans lines (SSE data lines are joined with "\n"; a WebSocket
// message may be pretty-printed) would break stdio framing, so its line
// breaks, which JSON only allows between tokens, become spaces: the same
// length, the same JSON value.
func (b *connector) emit(msg []byte) error {
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	for i, c := range line[:len(msg)] {
		if c == '\n' || c == '\r' {
			line[i] = ' '
		}
	}
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if _, err := b.opts.Stdout.Write(line); err != nil {
		return fmt.Errorf("writing to the editor: %w", err)
	}
	return nil
}

// fail reports the first fatal error; later ones are dropped.
func (b *connector) fail(err error) {
	b.lostOnce.Do(func() { b.lost <- err })
}

// authHeader adds the bearer token, if any.
func (b *connector) authHeader(h http.Header) {
	if b.opts.AuthToken != "" {
		h.Set("Authorization", "Bearer "+b.opts.AuthToken)
	}
}

// readLines calls fn with each line of stdin (without its newline; a
// final line without one too), with no size limit, then returns nil at
// EOF or the read error.
func readLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if msg := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(msg)) > 0 {
			if ferr := fn(msg); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading from the editor: %w", err)
		}
	}
}

// lostf wraps a cause as a lost connection with advice.
func lostf(format string, args ...any) error {
	return fmt.Errorf("%w: %s; connect does not reconnect (the conversation lives on the server): restart the agent in your editor", ErrConnectionLost, fmt.Sprintf(format, args...))
}
