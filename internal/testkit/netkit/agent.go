package netkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildTestAgent builds internal/testagent into a new temporary
// directory, for a TestMain, and returns its path and the function that
// removes it.
func BuildTestAgent() (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "acpscope-testagent-")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "testagent")
	build := exec.Command("go", "build", "-o", path, "github.com/acpscope/acpscope/internal/testagent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building the test agent: %w", err)
	}
	return path, func() { os.RemoveAll(dir) }, nil
}
