package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/bridge"
	"github.com/acpscope/acpscope/internal/door"
	flag "github.com/spf13/pflag"
)

// serveHelp is `acpscope serve`'s synopsis, examples and flags.
func serveHelp() help {
	return help{
		usage: "[--listen ADDR] [flags] -- AGENT CMD…",
		example: `  acpscope serve -- my-agent --acp
      clients use http://127.0.0.1:8700/acp (Streamable HTTP) or ws://127.0.0.1:8700/acp
  acpscope serve --auth-token-file ~/.config/acpscope/token -- npx @zed-industries/claude-code-acp
      creates the file (mode 0600) with a fresh token if missing; then
      acpscope connect --auth-token-file ~/.config/acpscope/token http://127.0.0.1:8700/acp
  acpscope serve --listen 0.0.0.0:8700 --auth-token-file tok --tls-cert c.pem --tls-key k.pem -- my-agent
      beyond loopback a token is required (or --no-auth, said on stderr)

Each connection (POST initialize without Acp-Connection-Id, or a WebSocket)
gets its own agent process; DELETE, a closed WebSocket, a connection
stream left closed for 10 s, or --idle-timeout with no stream open stops it. Routing follows the draft RFD:
initialize answers 200 with Acp-Connection-Id, other POSTs 202 with the reply
on the connection-scoped GET stream (session/new, load, fork, resume and
non-session messages) or the session-scoped one (everything naming a
session). A session's stream may be opened before the session/load or
session/resume that names it (the RFD's resume flow): it waits up to 30 s
for one, carries the replayed history, and ends if the load fails. SSE
events carry ids numbering all of a connection's events in the agent's order.
Requests whose Host is not this server's address or a loopback name (DNS
rebinding), or whose browser Origin is not our own, get 403 before any agent
starts: see --allow-host and --allow-origin.`,
		setup: func(fs *flag.FlagSet) {
			fs.SetInterspersed(false)
			fs.String("listen", defaultListen, "address to listen on (loopback unless you mean it)")
			fs.String("path", "/acp", "the endpoint path")
			tlsFlags(fs)
			guardFlags(fs)
			durationFlag(fs, "keepalive", bridge.DefaultKeepAlive, "keep-alive interval: a comment on quiet SSE streams, a ping on WebSockets; a client silent for three intervals, or taking three per 64 KiB sent, is let go (0 disables)")
			durationFlag(fs, "grace", agent.DefaultGrace, "when a connection ends, how long its agent gets before SIGTERM, then SIGKILL")
			serveBoundFlags(fs)
			netCaptureFlags(fs)
			faultFlags(fs)
		},
	}
}

func runServe(fs *flag.FlagSet, args []string) (int, error) {
	if fs.ArgsLenAtDash() < 0 || len(args) == 0 {
		return 2, usageErrorf("the agent command must follow '--': acpscope serve [flags] -- AGENT CMD…")
	}
	lo, guard, err := listenerOptions(fs, "serve")
	if err != nil {
		return 2, err
	}
	name, _ := fs.GetString("name")
	if name == "" {
		name = agentName(args)
	}
	opts := bridge.ServeOptions{Argv: args, AllowHosts: guard.AllowHosts, AllowOrigins: guard.AllowOrigins, AuthToken: guard.AuthToken}
	opts.Path, _ = fs.GetString("path")
	opts.KeepAlive, _ = fs.GetDuration("keepalive")
	if opts.KeepAlive == 0 {
		opts.KeepAlive = -1
	}
	opts.Agent.Grace, _ = fs.GetDuration("grace")
	if err := serveBounds(fs, &opts); err != nil {
		return 2, err
	}
	// An agent that cannot run would fail every connection with a 502 and
	// nothing on our stderr: say so once, now, as the stdio form does.
	if err := agent.CheckCommand(args, agent.HintServe); err != nil {
		return agent.ExitCannotStart, err
	}
	l, err := door.Listen(lo)
	if err != nil {
		return 1, err
	}
	opts.Listen = []string{lo.Addr, l.Addr().String()}
	meta := newMeta("http", name, args)
	meta.Listen = l.Addr().String()
	w := openCapture(fs, meta)
	if w != nil {
		opts.Recorder = w
	}
	faults, err := startFaults(fs, w)
	if err != nil {
		l.Close()
		closeNetCapture(w, nil)
		return 2, err
	}
	defer faults.stop()
	opts.Intercept = faults.interceptor()
	srv, err := bridge.NewServer(opts)
	if err != nil {
		l.Close()
		closeNetCapture(w, err)
		return 2, usageErrorf("%v", err)
	}
	ctx, stop := signalContext()
	defer stop()
	base := endpointURL(lo, l.Addr().String())
	fmt.Fprintf(os.Stderr, "acpscope serve: %s%s (WebSocket: ws%s%s) → %s\n", base, opts.Path, strings.TrimPrefix(base, "http"), opts.Path, args[0])
	err = door.Serve(ctx, l, lo, srv)
	srv.Close()
	closeNetCapture(w, err)
	if err != nil {
		return 1, err
	}
	return 0, nil
}
