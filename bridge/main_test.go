package bridge

import (
	"fmt"
	"os"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// testAgent is the path of the test agent built from the repository once
// for the whole package (see internal/testagent).
var testAgent string

func TestMain(m *testing.M) {
	path, cleanup, err := netkit.BuildTestAgent()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAgent = path
	code := m.Run()
	cleanup()
	demoAgentBinary.Remove()
	os.Exit(code)
}

// agentArgv returns the command line that runs the test agent in mode.
func agentArgv(mode ...string) []string { return append([]string{testAgent}, mode...) }
