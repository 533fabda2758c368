package door

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ListenOptions describe a listener for proxy and serve.
type ListenOptions struct {
	// Addr is host:port; an empty host means loopback, not every
	// interface.
	Addr string
	// TLSCert and TLSKey are PEM files; both set means HTTPS (HTTP/2 via
	// ALPN, HTTP/1.1 otherwise).
	TLSCert, TLSKey string
	// Warn receives a warning when the listener is not on loopback.
	Warn func(string)
}

// Listen opens the listening socket, turning "address in use" into advice.
func Listen(opts ListenOptions) (net.Listener, error) {
	addr := opts.Addr
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	if err := CheckListenAddr(addr); err != nil {
		return nil, err // before the warning: nothing will listen there
	}
	if !IsLoopback(addr) && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("listening on %s, which is not a loopback address: anyone who can reach it can try to talk to the agent; require a token or listen on 127.0.0.1", addr))
	}
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &adviceError{addr + " is in use; pick another --listen port", ErrAddrInUse}
	}
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return l, nil
}

// ListenAndServe listens as opts say and serves h until ctx ends; ready
// is called with the bound address once clients can connect. It speaks
// HTTP/1.1, cleartext HTTP/2 with prior knowledge and, with a
// certificate, HTTPS with HTTP/2 via ALPN.
func ListenAndServe(ctx context.Context, opts ListenOptions, h http.Handler, ready func(addr string)) error {
	l, err := Listen(opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(l.Addr().String())
	}
	return Serve(ctx, l, opts, h)
}

// Serve serves h on a listener from Listen until ctx ends.
func Serve(ctx context.Context, l net.Listener, opts ListenOptions, h http.Handler) error {
	return serveOn(ctx, newServer(h), l, opts)
}

// CheckListenAddr reports, wrapping ErrListenAddr, when addr is not a
// HOST:PORT to listen on: no port, or a port outside 0–65535. An empty
// host is allowed (Listen makes it loopback). Port names resolve from the
// local services database, never the network.
func CheckListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &adviceError{fmt.Sprintf("--listen %q is not HOST:PORT, e.g. 127.0.0.1:8700", addr), ErrListenAddr}
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return &adviceError{fmt.Sprintf("--listen %q: the port must be a number from 0 to 65535", addr), ErrListenAddr}
	}
	return nil
}

// IsLoopback reports whether host:port names a loopback address.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newServer makes an http.Server that speaks HTTP/1.1, HTTP/2 over TLS
// and cleartext HTTP/2 with prior knowledge, with no read or write
// timeouts: SSE streams and WebSockets live as long as the session.
func newServer(h http.Handler) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		Protocols:         &p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
}

// serveOn runs srv on l until ctx ends, then shuts it down, giving open
// requests a moment and then closing what remains (SSE streams never end
// on their own).
func serveOn(ctx context.Context, srv *http.Server, l net.Listener, opts ListenOptions) error {
	errc := make(chan error, 1)
	go func() { // server: ends when Shutdown or Close is called
		if opts.TLSCert != "" || opts.TLSKey != "" {
			errc <- srv.ServeTLS(l, opts.TLSCert, opts.TLSKey)
		} else {
			errc <- srv.Serve(l)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
