package interop

// Building and installing the peers, once per test process.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tsSDKVersion and wsVersion pin the TypeScript SDK and the `ws` package
// its WebSocket peers use (testdata/ts/package.json says the same).
const (
	tsSDKVersion = "2.4.0"
	wsVersion    = "8.18.3"
)

var (
	toolsOnce sync.Once
	toolsDir  string // binaries built for this test process
	toolsErr  error
	tools     struct{ acpscope, goAgent, goClient string }

	npmOnce sync.Once
	npmDir  string // where the TypeScript peers and their node_modules live
	npmSkip string // why the TypeScript peers cannot run, if they cannot
)

func cleanupTools() {
	if toolsDir != "" {
		_ = os.RemoveAll(toolsDir)
	}
}

// goTools builds acpscope and the Go SDK's example agent and client.
func goTools(t *testing.T) {
	t.Helper()
	toolsOnce.Do(func() {
		toolsDir, toolsErr = os.MkdirTemp("", "acpscope-interop-")
		if toolsErr != nil {
			return
		}
		// One go build for all three: it links them in parallel. The SDK's
		// examples are package main programs inside a module we require,
		// so they build from the module cache as they are; -o DIR names
		// each binary after its package's last element.
		pkgs := []string{"github.com/acpscope/acpscope",
			"github.com/coder/acp-go-sdk/example/agent", "github.com/coder/acp-go-sdk/example/client"}
		out, err := exec.Command("go", append([]string{"build", "-o", toolsDir + "/"}, pkgs...)...).CombinedOutput()
		if err != nil {
			toolsErr = fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
			return
		}
		tools.acpscope = filepath.Join(toolsDir, "acpscope")
		tools.goAgent = filepath.Join(toolsDir, "agent")
		tools.goClient = filepath.Join(toolsDir, "client")
	})
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
	requireStdioProxy(t)
}

// requireStdioProxy fails at once, with one clear message, when the
// binary lost its stdio proxy command (`acpscope [flags] -- AGENT` with
// --capture), rather than letting every case fail on its own.
func requireStdioProxy(t *testing.T) {
	t.Helper()
	out, _ := exec.Command(tools.acpscope, "help", "stdio").CombinedOutput()
	if !strings.Contains(string(out), "--capture") {
		t.Fatalf("acpscope has no stdio proxy command with --capture ('acpscope help stdio' said %q)", out)
	}
}

// tsPeers installs the TypeScript SDK (once, into a cache directory
// reused across runs) beside copies of testdata/ts/*.mjs, or skips.
func tsPeers(t *testing.T) string {
	t.Helper()
	npmOnce.Do(func() { npmDir, npmSkip = installTS() })
	if npmSkip != "" {
		t.Skip(npmSkip)
	}
	return npmDir
}

func installTS() (dir, skip string) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "TypeScript interop skipped: " + tool + " is not installed"
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir = filepath.Join(cache, "acpscope-interop", "ts-sdk-"+tsSDKVersion+"-ws-"+wsVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "TypeScript interop skipped: " + err.Error()
	}
	for _, name := range []string{"package.json", "agent.mjs", "client.mjs", "http-client.mjs", "http-server.mjs", "ws-client.mjs", "ws-server.mjs", "loading-agent.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "ts", name))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if err != nil {
			return "", "TypeScript interop skipped: " + err.Error()
		}
	}
	_, errSDK := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json"))
	_, errWS := os.Stat(filepath.Join(dir, "node_modules", "ws", "package.json"))
	if errSDK == nil && errWS == nil {
		return dir, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("TypeScript interop skipped: npm install @agentclientprotocol/sdk@%s ws@%s failed (offline?): %v\n%s", tsSDKVersion, wsVersion, err, out)
	}
	return dir, ""
}
