package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltByGoRun(t *testing.T) {
	hash := strings.Repeat("35053739a7422073", 4)
	tests := []struct {
		exe  string
		want bool
	}{
		{"/tmp/go-build3695374829/b001/exe/acpscope", true},
		{"/root/.cache/go-build/35/" + hash + "-d/acpscope", true},
		{"/tmp/go-build3695374829/b001/acpscope.test", false}, // go test
		{"/usr/local/bin/acpscope", false},
		{"acpscope", false},
		{"/home/me/exe/acpscope", false},
		{"/root/.cache/go-build/36/" + hash + "-d/acpscope", false},
	}
	for _, tt := range tests {
		if got := builtByGoRun(tt.exe); got != tt.want {
			t.Errorf("builtByGoRun(%q) = %v, want %v", tt.exe, got, tt.want)
		}
	}
}

// TestDemoNextStepsUnderGoRun: `go run . demo` (the README's first
// command) installs no acpscope, so the demo suggests go run . commands.
func TestDemoNextStepsUnderGoRun(t *testing.T) {
	tmp := t.TempDir()
	exe := filepath.Join(tmp, "go-build1234", "b001", "exe", "acpscope")
	if err := os.MkdirAll(filepath.Dir(exe), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], exe); err != nil { // os.Args[0] is what go run leaves
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "demo", "--dir", filepath.Join(tmp, "captures"), "--no-inspect", "--quiet-agent")
	cmd.Env = mainEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"next      go run . inspect ", "          go run . lint ", "or acpscope inspect …, once installed with go install ."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo under go run does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "next      acpscope") {
		t.Errorf("the demo under go run suggests an acpscope that is not installed:\n%s", out.String())
	}
}
