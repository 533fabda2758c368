package netkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary is a Go program built on first use into its own temporary
// directory and shared by a test binary's tests. TestMain calls Remove
// after m.Run, so no run leaves a binary behind in the temporary
// directory.
type Binary struct {
	// Package is what go build is given: an import path, or a path
	// relative to the test's package directory.
	Package string
	// Name is the file the program is built as.
	Name string

	once sync.Once
	dir  string
	path string
	err  error
}

// Path builds the program if no test has yet and returns its path; a
// failed build fails t.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func (b *Binary) build() {
	b.dir, b.err = os.MkdirTemp("", "acpscope-"+b.Name+"-")
	if b.err != nil {
		return
	}
	b.path = filepath.Join(b.dir, b.Name)
	out, err := exec.Command("go", "build", "-o", b.path, b.Package).CombinedOutput()
	if err != nil {
		b.err = fmt.Errorf("building %s: %v\n%s", b.Package, err, out)
	}
}

// Remove deletes the program and its directory, if it was built.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
