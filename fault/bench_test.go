package fault_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/proxy"
)

// BenchmarkStdio runs 20 000 lines through the stdio proxy and the echo
// test agent, both ways: without a hook (the default: the pumps copy
// bytes, nothing is framed), and with an engine that has no rules (every
// line framed and handed over). The first is the path every run without
// --faults takes, unchanged by the hook; the second is what a plan costs.
func BenchmarkStdio(b *testing.B) {
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 140) + `"}}` + "\n"
	input := strings.Repeat(line, 20_000)
	for _, bc := range []struct {
		name string
		hook tap.Interceptor
	}{
		{"transparent", nil},
		{"intercepted", fault.New(fault.Options{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(2 * len(input)))
			for b.Loop() {
				cfg := proxy.StdioConfig{Argv: []string{testAgent, "echo"}, Stdin: strings.NewReader(input), Stdout: io.Discard,
					Stderr: io.Discard, Intercept: bc.hook, Grace: 5 * time.Second, Signals: make(chan os.Signal)}
				if _, err := proxy.Stdio(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
