package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// testAgent is the path of the test agent built from the repository once
// for the whole package (see internal/testagent).
var testAgent string

// stdioWait bounds every wait for a process in these tests: generous,
// since the machines they run on are shared and busy.
const stdioWait = 2 * time.Minute

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acpscope-agent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAgent = filepath.Join(dir, "testagent")
	build := exec.Command("go", "build", "-o", testAgent, "github.com/acpscope/acpscope/internal/testagent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test agent: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentArgv returns the command line that runs the test agent in mode.
func agentArgv(mode ...string) []string { return append([]string{testAgent}, mode...) }
