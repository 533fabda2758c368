package proxy

import (
	"os"
	"testing"
	"time"
)

// stuckWriter is an editor end that never reads: every Write blocks until
// the test ends.
type stuckWriter struct{ release chan struct{} }

func (w stuckWriter) Write(b []byte) (int, error) {
	<-w.release
	return len(b), nil
}

// TestStdioEditorReadsNeitherOutput: the agent wrote to both stdout and
// stderr and exited, and the editor reads neither; both pumps are stuck
// writing, are abandoned, and the proxy still returns.
func TestStdioEditorReadsNeitherOutput(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := stuckWriter{release}
	inR, _ := mustPipe(t)
	done := make(chan Result, 1)
	go func() {
		res, _ := Stdio(t.Context(), StdioConfig{Argv: []string{"sh", "-c", "echo out; echo err >&2"},
			Stdin: inR, Stdout: stuck, Stderr: stuck, Grace: 100 * time.Millisecond, Signals: make(chan os.Signal)})
		done <- res
	}()
	select {
	case res := <-done:
		if res.Exit.Code != 0 {
			t.Errorf("exit %d, want 0", res.Exit.Code)
		}
	case <-time.After(stdioWait):
		t.Fatal("the proxy did not return: a pump stuck writing held up the exit")
	}
}
