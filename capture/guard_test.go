package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPanics tells damage from bugs: what a damaged file makes bbolt
// or the memory map do is reported as ErrCorrupt, while a panic in our
// own code (a decoder, a caller's callback) is a bug and keeps panicking.
func TestReadPanics(t *testing.T) {
	dir := t.TempDir()
	big := bigCapture(t, dir)
	orig, err := os.ReadFile(big)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// read does something to a reader of a copy of the capture at
		// path; it returns the first error and what panicked, if anything.
		read      func(t *testing.T, path string) (any, error)
		wantPanic string // "" when the read must end in ErrCorrupt
	}{
		{"pages of an unknown type", func(t *testing.T, path string) (any, error) {
			b := append([]byte(nil), orig...)
			damaged := 0
			for off := 2 * pageSize; off+pageSize <= len(b); off += pageSize {
				if binary.LittleEndian.Uint16(b[off+8:]) == leafPage {
					binary.LittleEndian.PutUint16(b[off+8:], 0x40)
					damaged++
				}
			}
			if damaged == 0 {
				t.Fatal("no leaf pages found to damage")
			}
			os.WriteFile(path, b, 0o600)
			return readEverything(path)
		}, ""},
		{"file truncated under the reader", func(t *testing.T, path string) (any, error) {
			os.WriteFile(path, orig, 0o600)
			r, err := Open(path)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			if err := os.Truncate(path, 4*pageSize); err != nil {
				t.Fatal(err)
			}
			return catch(func() error { _, err := r.Body(r.Last()); return err })
		}, ""},
		{"a decoder bug", func(t *testing.T, path string) (any, error) {
			os.WriteFile(path, orig, 0o600)
			r := openTest(t, path)
			// A segment a buggy decoder might return: no body offsets.
			return catch(func() (err error) {
				defer r.guard(&err)()
				_, err = (&segment{first: 1, recs: make([]Record, 1)}).body(nil, 1)
				return err
			})
		}, "index out of range"},
		{"a bug in a caller's callback", func(t *testing.T, path string) (any, error) {
			os.WriteFile(path, orig, 0o600)
			r := openTest(t, path)
			return catch(func() error {
				return r.Scan(1, func(*Record) bool { panic("the caller's bug") })
			})
		}, "the caller's bug"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("copy-%d%s", i, Ext))
			p, err := tt.read(t, path)
			if tt.wantPanic != "" {
				if p == nil || !strings.Contains(fmt.Sprint(p), tt.wantPanic) {
					t.Fatalf("read ended with error %v and panic %v, want the panic %q", err, p, tt.wantPanic)
				}
				return
			}
			if p != nil {
				t.Fatalf("reading a damaged file panicked: %v", p)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("reading a damaged file: %v, want ErrCorrupt naming the file", err)
			}
			t.Log(err)
		})
	}
}

// bbolt's page layout, as far as the damage above needs it.
const (
	pageSize = 4096
	leafPage = 0x02 // page flags at byte 8 of each page header
)

// catch runs fn, returning what it panicked with or its error.
func catch(fn func() error) (p any, err error) {
	defer func() { p = recover() }()
	return nil, fn()
}

// readEverything opens path and reads every record, body and index entry it
// can, returning the first error or what panicked.
func readEverything(path string) (any, error) {
	return catch(func() error {
		r, err := Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		var bodyErr error
		err = r.Scan(1, func(rec *Record) bool {
			_, bodyErr = r.Body(rec.Seq)
			return bodyErr == nil
		})
		if err == nil {
			err = bodyErr
		}
		if err == nil {
			_, err = r.Lookup(IndexMethod, "session/update")
		}
		return err
	})
}
