package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/acpscope/acpscope/proxy"
	flag "github.com/spf13/pflag"
)

// connectHelp is `acpscope connect`'s synopsis, examples and flags.
func connectHelp() help {
	return help{
		usage: "[flags] URL",
		example: `  acpscope connect ws://127.0.0.1:8700/acp           # put this in the editor's agent config
  acpscope connect http://127.0.0.1:8700/acp         # Streamable HTTP (HTTP/1.1)
  acpscope connect --h2c http://127.0.0.1:8700/acp   # Streamable HTTP over cleartext HTTP/2
  acpscope connect --auth-token "$TOKEN" https://agents.example.com/acp

stdin and stdout carry the editor's JSON-RPC lines (stdout carries nothing
else); messages go out as POSTs or WebSocket text messages, and come back
from the connection and session GET streams, opened as the RFD says.

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
			fs.String("auth-token", "", "send 'Authorization: Bearer TOKEN' (default $ACPSCOPE_AUTH_TOKEN)")
			fs.Bool("h2c", false, "speak cleartext HTTP/2 with prior knowledge to an http:// server")
			fs.Bool("unsafe-insecure", false, "do not verify the server's TLS certificate (UNSAFE)")
			netCaptureFlags(fs)
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
	meta := newMeta(transport, name, redactArgs(os.Args[1:]))
	meta.Upstream = args[0]
	w := openCapture(fs, meta)
	opts := proxy.ConnectOptions{URL: args[0], Stdin: os.Stdin, Stdout: os.Stdout}
	opts.AuthToken = authToken(fs)
	opts.H2C, _ = fs.GetBool("h2c")
	opts.UnsafeInsecure, _ = fs.GetBool("unsafe-insecure")
	opts.Warn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	if w != nil {
		opts.Recorder = w
	}
	ctx, stop := signalContext()
	defer stop()
	err = proxy.Connect(ctx, opts)
	closeNetCapture(w, err)
	switch {
	case err == nil, errors.Is(err, ctx.Err()) && ctx.Err() != nil:
		return 0, nil
	case errors.Is(err, proxy.ErrUpstreamURL):
		return 2, usageErrorf("%v", err)
	}
	return 1, err
}
