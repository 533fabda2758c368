package bench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/proxy"
)

// testAgent is the path of the test agent built from the repository once
// for the whole package (see internal/testagent).
var testAgent string

func TestMain(m *testing.M) {
	if mode := os.Getenv(peerEnv); mode != "" {
		os.Exit(runPeer(mode))
	}
	path, cleanup, err := netkit.BuildTestAgent()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAgent = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// agentArgv returns the command line that runs the test agent in mode.
func agentArgv(mode ...string) []string { return append([]string{testAgent}, mode...) }

// peerEnv makes the test binary act as a helper process instead of
// running tests (see TestMain); its value names the role. The only role
// is "proxy": the stdio proxy around os.Args[1:], recording into the
// capture file named by peerCaptureEnv with a real capture.Writer, as
// the acpscope command does. The benchmark measures it as a process of
// its own.
const (
	peerEnv        = "ACPSCOPE_BENCH_TEST_PEER"
	peerCaptureEnv = "ACPSCOPE_BENCH_TEST_CAPTURE"
)

func runPeer(mode string) int {
	if mode != "proxy" {
		fmt.Fprintf(os.Stderr, "unknown test peer %q\n", mode)
		return 2
	}
	path := os.Getenv(peerCaptureEnv)
	if path == "" {
		code, err := proxy.RunStdio(context.Background(), proxy.StdioConfig{Argv: os.Args[1:]})
		if err != nil {
			fmt.Fprintln(os.Stderr, "acpscope:", err)
		}
		return code
	}
	w, err := capture.Create(path, capture.WriterOptions{
		Meta: capture.Meta{Argv: os.Args[1:], Transport: "stdio", Agent: "testagent"},
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, "acpscope: "+msg) },
	})
	if err != nil {
		// As the acpscope command does: say so, forward anyway.
		fmt.Fprintf(os.Stderr, "acpscope: NOT RECORDING: %v; forwarding continues\n", err)
		code, _ := proxy.RunStdio(context.Background(), proxy.StdioConfig{Argv: os.Args[1:]})
		return code
	}
	res, err := proxy.Stdio(context.Background(), proxy.StdioConfig{Argv: os.Args[1:], Recorder: w})
	w.UpdateMeta(func(m *capture.Meta) {
		m.Exit = &capture.Exit{Code: res.Exit.Code, Signal: res.Exit.SignalName()}
	})
	if cerr := w.Close(); cerr != nil {
		fmt.Fprintln(os.Stderr, "acpscope: closing the capture:", cerr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpscope:", err)
	}
	return res.Exit.Code
}
