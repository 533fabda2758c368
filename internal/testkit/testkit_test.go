package testkit

import (
	"path/filepath"
	"sync"
	"testing"
)

func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x\n"))
				_ = b.Lines()
			}
		})
	}
	wg.Wait()
	if n := len(b.Lines()); n != 401 { // 400 lines and the empty rest
		t.Fatalf("%d lines, want 401", n)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "g.txt")
	Golden(t, path, []byte("v1"), true, "-update")
	Golden(t, path, []byte("v1"), false, "-update")
	var probe failures
	Golden(&probe, path, []byte("v2"), false, "-update")
	if probe != 1 {
		t.Errorf("a differing result gave %d failures, want 1", probe)
	}
}

// failures counts what Golden reports.
type failures int

func (f *failures) Helper()               {}
func (f *failures) Fatal(...any)          { *f++ }
func (f *failures) Fatalf(string, ...any) { *f++ }
func (f *failures) Errorf(string, ...any) { *f++ }
