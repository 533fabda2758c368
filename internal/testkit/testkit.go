package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer safe for a writer and concurrent readers, for
// collecting a stream that a test polls while it grows.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Bytes returns a copy of what was written so far.
func (s *Buffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func (s *Buffer) String() string { return string(s.Bytes()) }

// Lines splits what was written so far after each newline.
func (s *Buffer) Lines() []string { return strings.SplitAfter(s.String(), "\n") }

// T is the part of testing.TB that Golden uses.
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Golden compares got with the file at path, or rewrites the file when
// update is set; flag names the flag that sets it, for the failure
// message.
func Golden(t T, path string, got []byte, update bool, flag string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with %s to create it): %v", flag, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with %s if intended)\n--- got\n%s\n--- want\n%s", path, flag, head(got), head(want))
	}
}

// head keeps failure messages readable for large golden files.
func head(b []byte) []byte {
	const n = 4000
	if len(b) > n {
		return append(b[:n:n], "…"...)
	}
	return b
}

// FirstDiff returns the index of the first byte where a and b differ, or
// the shorter one's length when one is the other's beginning.
func FirstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
