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

// TestLintFindsInstalledSchema: `lint --schema` without a file finds the
// schema of the SDK package the TypeScript peers use, from a directory
// inside the project that installed it, and names its version.
func TestLintFindsInstalledSchema(t *testing.T) {
	if officialSchema() == "" {
		t.Skip(npmSkip)
	}
	goTools(t)
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "v1.jsonl")
	os.WriteFile(jsonl, []byte(`{"dir":"client","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}}`+"\n"+
		`{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}}`+"\n"), 0o600)
	capPath := filepath.Join(dir, "v1.acpscope")
	if out, err := exec.Command(tools.acpscope, "import", jsonl, "-o", capPath).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	inside, err := os.MkdirTemp(npmDir, "lint-cwd-") // a directory of the project that installed the SDK
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(inside)
	cmd := exec.Command(tools.acpscope, "lint", "--no-save", "--schema", capPath)
	cmd.Dir = inside
	cmd.Env = append(os.Environ(), "ACPSCOPE_SCHEMA=")
	out, err := cmd.CombinedOutput()
	want := "schema/v1/schema.json (@agentclientprotocol/sdk " + tsSDKVersion + ", protocol v1 schema, found via " + filepath.Join(npmDir, "node_modules") + ")"
	if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "0 errors") {
		t.Errorf("lint --schema from inside the package's project: %v\n%s\nwant it to say %q", err, out, want)
	}
}
