package proxy

import (
	"context"
	"fmt"
	"os"

	"github.com/acpscope/acpscope/capture"
)

// peerEnv makes the test binary act as a helper process instead of
// running tests (see TestMain); its value names the role. The only role
// is "proxy": the stdio proxy around os.Args[1:], recording into the
// capture file named by peerCaptureEnv with a real capture.Writer, as
// the acpscope command does. Benchmarks measure it as a process of its own.
const (
	peerEnv        = "ACPSCOPE_PROXY_TEST_PEER"
	peerCaptureEnv = "ACPSCOPE_PROXY_TEST_CAPTURE"
)

func runPeer(mode string) int {
	if mode != "proxy" {
		fmt.Fprintf(os.Stderr, "unknown test peer %q\n", mode)
		return 2
	}
	path := os.Getenv(peerCaptureEnv)
	var w *capture.Writer
	if path != "" {
		var err error
		if w, err = createCapture(path); err != nil {
			// As the acpscope command does: say so, forward anyway.
			fmt.Fprintf(os.Stderr, "acpscope: NOT RECORDING: %v; forwarding continues\n", err)
		}
	}
	if w == nil {
		code, err := RunStdio(context.Background(), StdioConfig{Argv: os.Args[1:]})
		if err != nil {
			fmt.Fprintln(os.Stderr, "acpscope:", err)
		}
		return code
	}
	res, err := Stdio(context.Background(), StdioConfig{Argv: os.Args[1:], Recorder: w})
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

// createCapture creates the capture the peer proxy records into.
func createCapture(path string) (w *capture.Writer, err error) {
	return capture.Create(path, capture.WriterOptions{
		Meta: capture.Meta{Argv: os.Args[1:], Transport: "stdio", Agent: "testagent"},
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, "acpscope: "+msg) },
	})
}
