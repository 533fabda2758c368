package cli

import (
	"github.com/acpscope/acpscope/bridge"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/proxy"
	flag "github.com/spf13/pflag"
)

// The input bounds of serve and proxy: how big a message, how many
// connections or requests at once, how long an idle connection lives.

// maxMessageFlag adds --max-message-size; more says what else it bounds.
func maxMessageFlag(fs *flag.FlagSet, more string) {
	fs.String("max-message-size", "256MiB", "largest POST body or WebSocket message, a `SIZE` such as 64MiB or 1GiB; a larger one gets 413 or WebSocket close 1009"+more)
}

func serveBoundFlags(fs *flag.FlagSet) {
	maxMessageFlag(fs, "")
	fs.Int("max-connections", bridge.DefaultMaxConns, "most connections (agent processes) at once; initialize beyond it gets 503 (0: no cap)")
	durationFlag(fs, "idle-timeout", bridge.DefaultIdleTimeout, "stop a connection's agent when it has no stream open and sends nothing for this long (0: never)")
}

func proxyBoundFlags(fs *flag.FlagSet) {
	maxMessageFlag(fs, "; a larger SSE event from the agent passes, recorded empty and flagged truncated")
	fs.Int("max-in-flight", proxy.DefaultMaxInFlight, "most requests, streams and WebSockets at once; beyond it a request gets 503 (0: no cap)")
}

// maxMessageSize reads --max-message-size.
func maxMessageSize(fs *flag.FlagSet) (int64, error) {
	text, _ := fs.GetString("max-message-size")
	n, err := human.ParseSize(text)
	if err != nil {
		return 0, usageErrorf("--max-message-size: %v", err)
	}
	if n <= 0 {
		return 0, usageErrorf("--max-message-size must be more than 0, e.g. 256MiB")
	}
	return n, nil
}

// noCap turns a flag's 0 ("no cap", "never") into the options' negative.
func noCap[T ~int | ~int64](v T) T {
	if v <= 0 {
		return -1
	}
	return v
}

// serveBounds reads serve's bound flags into opts.
func serveBounds(fs *flag.FlagSet, opts *bridge.ServeOptions) error {
	n, err := maxMessageSize(fs)
	if err != nil {
		return err
	}
	opts.MaxMessageSize = n
	conns, _ := fs.GetInt("max-connections")
	idle, _ := fs.GetDuration("idle-timeout")
	opts.MaxConns, opts.IdleTimeout = noCap(conns), noCap(idle)
	return nil
}

// proxyBounds reads proxy's bound flags into opts.
func proxyBounds(fs *flag.FlagSet, opts *proxy.HTTPProxyOptions) error {
	n, err := maxMessageSize(fs)
	if err != nil {
		return err
	}
	opts.MaxMessageSize = n
	inFlight, _ := fs.GetInt("max-in-flight")
	opts.MaxInFlight = noCap(inFlight)
	return nil
}
