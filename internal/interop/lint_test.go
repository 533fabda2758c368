package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// officialSchema returns the ACP v1 JSON schema shipped in the
// TypeScript SDK package, or "" when node/npm are not available.
func officialSchema() string {
	npmOnce.Do(func() { npmDir, npmSkip = installTS() })
	if npmSkip != "" {
		return ""
	}
	path := filepath.Join(npmDir, "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// checkLint runs `acpscope lint` on the run's capture, against the
// official schema when it is at hand. Real peers that interoperate must
// produce no error findings: one would be a bug in a peer (the demo
// peers are ours) or a false positive in lint; either way a bug.
func checkLint(t *testing.T, o *outcome) {
	t.Helper()
	args := []string{"lint", "--no-save"}
	if schema := officialSchema(); schema != "" {
		args = append(args, "--schema", schema)
	} else {
		t.Log("linting without the official schema (node/npm unavailable)")
	}
	out, err := exec.Command(tools.acpscope, append(args, o.capture)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 errors") {
		t.Errorf("acpscope %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
