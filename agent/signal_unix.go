//go:build unix

package agent

import (
	"os"
	"os/signal"
	"syscall"
)

// forwardedSignals are passed on to the agent's process group.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// SubscribeSignals catches the forwarded signals, and SIGPIPE so that a
// write to an editor that closed our stdout returns EPIPE (and shuts the
// agent down in order) instead of killing the proxy outright. Handled,
// not ignored: an ignored signal would stay ignored in the agent.
func SubscribeSignals() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 4)
	signal.Notify(c, forwardedSignals...)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return c, func() {
		signal.Stop(c)
		signal.Stop(pipe)
	}
}

// toSyscall turns a received signal into one we can send to a group.
func toSyscall(sig os.Signal) syscall.Signal {
	if s, ok := sig.(syscall.Signal); ok {
		return s
	}
	return syscall.SIGTERM
}
