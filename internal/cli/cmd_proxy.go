package cli

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/door"
	"github.com/acpscope/acpscope/proxy"
	flag "github.com/spf13/pflag"
)

// defaultListen is where proxy and serve listen unless told otherwise:
// loopback only, so nothing on the network can reach the agent.
const defaultListen = "127.0.0.1:8700"

// proxyHelp is `acpscope proxy`'s synopsis, examples and flags.
func proxyHelp() help {
	return help{
		usage: "--upstream URL [--listen ADDR] [flags]",
		example: `  acpscope proxy --upstream http://127.0.0.1:7331/acp
      then point the client at http://127.0.0.1:8700/acp (or ws://127.0.0.1:8700/acp)
  acpscope proxy --listen 127.0.0.1:9000 --upstream https://agents.example.com/acp
  acpscope proxy --upstream http://127.0.0.1:8080/v1/rpc            # rivet: the endpoint is /v1/rpc
  acpscope proxy --tls-cert cert.pem --tls-key key.pem --upstream https://10.0.0.5/acp --unsafe-upstream-insecure
  ACPSCOPE_UPSTREAM_AUTH_TOKEN=$KEY acpscope proxy --auth-token-file tok --upstream https://agents.example.com/acp
      clients send the token in tok; the upstream gets $KEY instead
  acpscope proxy --faults flaky-agent --upstream http://127.0.0.1:7331/acp  # a fault plan on every message

Every POST body, SSE event, JSON reply and WebSocket message on the endpoint
is forwarded unchanged and recorded with its HTTP envelope; other paths
(/health) pass through unrecorded. HTTP/1.1, cleartext HTTP/2 (prior
knowledge) and TLS work on both sides; the upstream is spoken to in the
protocol the client used. Host, Origin and the token are checked as serve
checks them, before anything is forwarded; the client's Authorization goes
upstream unchanged unless --upstream-auth-token(-file) replaces it. With
--faults or --allow-intercept every message goes through the plan or the
inspector's holds instead, and is recorded as what happened to it (see
acpscope help faults).`,
		setup: func(fs *flag.FlagSet) {
			fs.String("listen", defaultListen, "address to listen on (loopback unless you mean it)")
			fs.String("upstream", "", "the agent's endpoint URL, http(s):// (ws:// and wss:// are accepted as aliases)")
			fs.String("path", "", "our endpoint path (default: the upstream's path, or /acp)")
			tlsFlags(fs)
			fs.Bool("unsafe-upstream-insecure", false, "do not verify the upstream's TLS certificate (UNSAFE)")
			fs.String("upstream-protocol", "auto", "towards an http:// upstream: auto (what the client spoke), http1 or h2c")
			guardFlags(fs)
			fs.String("upstream-auth-token", "", "send the upstream 'Authorization: Bearer TOKEN' instead of the client's (shows in ps: prefer the file or $"+envUpstreamAuthToken+")")
			fs.String("upstream-auth-token-file", "", "send the upstream the token in FILE instead of the client's")
			proxyBoundFlags(fs)
			netCaptureFlags(fs)
			faultFlags(fs)
		},
	}
}

func tlsFlags(fs *flag.FlagSet) {
	fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	fs.String("tls-key", "", "the PEM private key for --tls-cert")
}

// netCaptureFlags are the capture flags of proxy, serve and connect.
func netCaptureFlags(fs *flag.FlagSet) {
	fs.String("capture", "", "write the capture to this file")
	captureDirFlag(fs)
	fs.Bool("no-capture", false, "forward only, record nothing")
	fs.String("name", "", "agent name for listings")
	fs.Bool("quiet", false, "do not print where the capture goes (loss warnings still print)")
	commitFlag(fs)
	otlpFlags(fs)
}

func runProxy(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("proxy takes no arguments, got %q", args)
	}
	upstream, _ := fs.GetString("upstream")
	if upstream == "" {
		return 2, usageErrorf("--upstream URL is required, e.g. --upstream http://127.0.0.1:7331/acp")
	}
	lo, guard, err := listenerOptions(fs, "proxy")
	if err != nil {
		return 2, err
	}
	name, _ := fs.GetString("name")
	if name == "" {
		name = hostName(upstream)
	}
	opts := proxy.HTTPProxyOptions{Upstream: upstream, AllowHosts: guard.AllowHosts, AllowOrigins: guard.AllowOrigins, AuthToken: guard.AuthToken}
	if opts.UpstreamAuthToken, _, err = readToken(fs, "proxy", "upstream-auth-token", envUpstreamAuthToken, false); err != nil {
		return 2, err
	}
	opts.Path, _ = fs.GetString("path")
	opts.UnsafeUpstreamInsecure, _ = fs.GetBool("unsafe-upstream-insecure")
	opts.UpstreamProtocol, _ = fs.GetString("upstream-protocol")
	if err := proxyBounds(fs, &opts); err != nil {
		return 2, err
	}
	if _, err := proxy.NewHTTPProxy(opts); err != nil {
		return 2, usageErrorf("%v", err) // checked before anything is opened
	}
	l, err := door.Listen(lo)
	if err != nil {
		return 1, err
	}
	opts.Listen = []string{lo.Addr, l.Addr().String()}
	meta := newMeta("http", name, redactArgs(os.Args[1:]))
	meta.Upstream, meta.Listen = upstream, l.Addr().String()
	if opts.UpstreamAuthToken != "" {
		// Traffic changed on purpose is recorded as such.
		meta.Notes = map[string]string{"upstreamAuthorization": "replaced by the proxy's upstream token; recorded headers are the client's"}
	}
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
	opts.Intercept, opts.Warn = faults.interceptor(), warn
	p, _ := proxy.NewHTTPProxy(opts)
	defer p.Close()
	ctx, stop := signalContext()
	defer stop()
	fmt.Fprintf(os.Stderr, "acpscope proxy: %s%s → %s\n", endpointURL(lo, l.Addr().String()), p.Path(), upstream)
	err = door.Serve(ctx, l, lo, p)
	closeNetCapture(w, err)
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// listenOptions reads --listen, --tls-cert and --tls-key.
func listenOptions(fs *flag.FlagSet) (door.ListenOptions, error) {
	var lo door.ListenOptions
	lo.Addr, _ = fs.GetString("listen")
	lo.TLSCert, _ = fs.GetString("tls-cert")
	lo.TLSKey, _ = fs.GetString("tls-key")
	if (lo.TLSCert == "") != (lo.TLSKey == "") {
		return lo, usageErrorf("--tls-cert and --tls-key go together")
	}
	if err := door.CheckListenAddr(lo.Addr); err != nil {
		return lo, usageErrorf("%v", err) // before the non-loopback warning
	}
	return lo, nil // beyond loopback, serverToken warns or refuses
}

// endpointURL is the base URL clients use for a listener.
func endpointURL(lo door.ListenOptions, addr string) string {
	if lo.TLSCert != "" {
		return "https://" + addr
	}
	return "http://" + addr
}

func hostName(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ReplaceAll(u.Host, ":", "-")
	}
	return "remote"
}

// redactArgs returns argv with the values of the token flags hidden, for
// the capture's metadata: no credential is ever stored in clear.
func redactArgs(argv []string) []string {
	out := append([]string(nil), argv...)
	for i, a := range out {
		if a == "--" {
			return out // the agent's own arguments follow
		}
		for _, name := range []string{"--auth-token", "--upstream-auth-token"} {
			switch {
			case a == name && i+1 < len(out):
				out[i+1] = "<redacted>"
			case strings.HasPrefix(a, name+"="):
				out[i] = name + "=<redacted>"
			}
		}
	}
	return out
}

func closeNetCapture(w *capture.Writer, runErr error) {
	if w == nil {
		return
	}
	if runErr != nil {
		w.UpdateMeta(func(m *capture.Meta) { m.Exit = &capture.Exit{Code: 1, Error: runErr.Error()} })
	}
	closeCapture(w)
}
