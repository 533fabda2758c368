package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/acpscope/acpscope/bridge"
	flag "github.com/spf13/pflag"
)

// connectHelp is `acpscope connect`'s synopsis, examples and flags.
func connectHelp() help {
	return help{
		usage: "[flags] URL",
		example: `  acpscope connect ws://127.0.0.1:8700/acp           # put this in the editor's agent config
  acpscope connect http://127.0.0.1:8700/acp         # Streamable HTTP (HTTP/2 if the server speaks it)
  acpscope connect --http1 http://127.0.0.1:8700/acp # Streamable HTTP over HTTP/1.1 only
  acpscope connect --auth-token-file ~/.config/acpscope/token http://127.0.0.1:8700/acp
      the file serve --auth-token-file wrote; or set ACPSCOPE_AUTH_TOKEN

stdin and stdout carry the editor's JSON-RPC lines (stdout carries nothing
else); messages go out as POSTs or WebSocket text messages, and come back
from the connection and session GET streams, opened as the RFD says (a
session's stream before its session/load or session/resume, so the replayed
history reaches the editor before the answer).

HTTP version: the RFD requires HTTP/2. Over https:// connect offers it
through TLS (ALPN); over http:// it first checks whether the server speaks
cleartext HTTP/2 (prior knowledge) and falls back to HTTP/1.1 when not.
--h2c skips the check, --http1 speaks only HTTP/1.1. stderr says which
version it used and why.

Reconnect policy: none. A connection's state (its sessions, pending
requests) lives on the server, so a new connection could not continue the
editor's conversation: when the server goes away, connect says why on
stderr and exits with status 1; the editor restarts the agent.
When the editor closes stdin, connect delivers the answers to requests it
already sent (waiting up to 5 s over WebSocket), then ends the connection
(DELETE, or a WebSocket close), which stops the agent on the server.
Exit status: 0 when the editor closes stdin, 1 when the connection fails or
is lost, 2 for usage errors.`,
		setup: func(fs *flag.FlagSet) {
			clientTokenFlags(fs)
			fs.Bool("h2c", false, "speak cleartext HTTP/2 with prior knowledge to an http:// server, without checking first")
			fs.Bool("http1", false, "speak only HTTP/1.1 (the RFD requires HTTP/2)")
			fs.Bool("unsafe-insecure", false, "do not verify the server's TLS certificate (UNSAFE)")
			durationFlag(fs, "keepalive", bridge.DefaultKeepAlive, "ping interval on a WebSocket: a server that answers no ping for three intervals, or takes three per 64 KiB sent, is lost (0 disables)")
			netCaptureFlags(fs)
			faultFlags(fs)
		},
	}
}

func runConnect(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) != 1 {
		return 2, usageErrorf("want one URL, e.g. acpscope connect ws://127.0.0.1:8700/acp (got %q)", args)
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Host == "" {
		return 2, usageErrorf("%q is not a URL such as ws://127.0.0.1:8700/acp", args[0])
	}
	if h2c, _ := fs.GetBool("h2c"); h2c {
		if http1, _ := fs.GetBool("http1"); http1 {
			return 2, usageErrorf("--h2c and --http1 exclude each other: give one")
		}
	}
	name, _ := fs.GetString("name")
	if name == "" {
		name = hostName(args[0])
	}
	transport := "http"
	switch u.Scheme {
	case "ws", "wss":
		transport = "ws"
	case "http", "https":
	default:
		return 2, usageErrorf("%q: the scheme must be http, https, ws or wss", args[0])
	}
	token, _, err := readToken(fs, "connect", "auth-token", envAuthToken, false)
	if err != nil {
		return 2, err
	}
	meta := newMeta(transport, name, redactArgs(os.Args[1:]))
	meta.Upstream = args[0]
	w := openCapture(fs, meta)
	opts := bridge.ConnectOptions{URL: args[0], Stdin: os.Stdin, Stdout: os.Stdout}
	opts.AuthToken = token
	opts.H2C, _ = fs.GetBool("h2c")
	opts.HTTP1, _ = fs.GetBool("http1")
	opts.UnsafeInsecure, _ = fs.GetBool("unsafe-insecure")
	if opts.KeepAlive, _ = fs.GetDuration("keepalive"); opts.KeepAlive == 0 {
		opts.KeepAlive = -1 // the flag's 0 is "none"; the option's 0 is the default
	}
	opts.Warn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	opts.Info = opts.Warn
	if w != nil {
		opts.Recorder = w
	}
	faults, err := startFaults(fs, w)
	if err != nil {
		closeNetCapture(w, nil)
		return 2, err
	}
	opts.Intercept = faults.interceptor()
	ctx, stop := signalContext()
	defer stop()
	err = bridge.Connect(ctx, opts)
	faults.stop()
	closeNetCapture(w, err)
	switch {
	case err == nil, errors.Is(err, ctx.Err()) && ctx.Err() != nil:
		return 0, nil
	case errors.Is(err, bridge.ErrUpstreamURL):
		return 2, usageErrorf("%v", err)
	}
	return 1, err
}
