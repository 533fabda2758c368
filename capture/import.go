package capture

// Import turns a file from elsewhere into a capture: our own capture
// files (copied and validated), JSONL with one message per line and its
// direction, the acp-devtools JSON export, and the traces of the
// reference conductor and of acp-inspector (import_trace.go).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// ErrUnknownFormat: Import could not tell what the file is.
var ErrUnknownFormat = errors.New(`unrecognised format: expected an acpscope capture, JSONL (acpscope dump lines, or {"dir":"client"|"agent","msg":{…}} per line), an acp-devtools JSON export, a conductor --trace file or an acp-inspector trace export`)

// The formats Import reads.
const (
	FormatCapture  = "acpscope capture"
	FormatJSONL    = "jsonl"
	FormatDevtools = "acp-devtools"
)

// ImportResult says what Import read.
type ImportResult struct {
	Format  string
	Records int
}

// Import reads src and writes a new capture at dst (which must not
// exist), with Meta.Transport "import" and the original times.
func Import(src, dst string) (ImportResult, error) {
	head, err := readHead(src, 4096)
	if err != nil {
		return ImportResult{}, err
	}
	// Checked first, and never removed below: a failed import must not
	// delete a file that was there before it.
	if _, err := os.Lstat(dst); err == nil {
		return ImportResult{}, fmt.Errorf("%s already exists: %w", dst, fs.ErrExist)
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	var res ImportResult
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		res, err = importJSON(src, dst)
	case isBolt(head):
		res, err = importCapture(src, dst)
	default:
		err = fmt.Errorf("%q: %w", src, ErrUnknownFormat)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		os.Remove(dst)
	}
	return res, err
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err // names the file and what failed
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %q: %w", path, err)
	}
	return buf[:k], nil
}

// isBolt reports whether head starts a bbolt database (the magic number
// at byte 16 of its first page): a capture, whole or damaged, rather than
// some other format.
func isBolt(head []byte) bool {
	return len(head) >= 20 && binary.LittleEndian.Uint32(head[16:]) == 0xED0CDAED
}

// NoteImportedAt is the Meta.Notes key holding when a capture was
// imported (RFC 3339): its start stays the session's own, so this is
// what tells gc an old session imported today is new here.
const NoteImportedAt = "importedAt"

// importMeta starts the metadata of an imported capture.
func importMeta(src string, format string) Meta {
	return Meta{
		Transport: "import",
		Notes: map[string]string{"importedFrom": filepath.Base(src), "format": format,
			NoteImportedAt: time.Now().UTC().Format(time.RFC3339)},
	}
}

// importCapture copies one of our capture files record by record, which
// also proves every record and body can be read.
func importCapture(src, dst string) (ImportResult, error) {
	res := ImportResult{Format: FormatCapture}
	r, err := Open(src)
	if err != nil {
		return res, err // it says whether the file is corrupt or not ours
	}
	defer r.Close()
	meta := r.Meta()
	orig := meta.Transport
	meta.Notes = copyNotes(meta.Notes)
	imported := importMeta(src, FormatCapture)
	for k, v := range imported.Notes {
		meta.Notes[k] = v
	}
	meta.Notes["originalTransport"] = orig
	meta.Transport = "import" // the start and end stay the session's own
	w, err := Create(dst, copyOptions(meta))
	if err != nil {
		return res, err // Create names the file
	}
	cp := newCopier(w)
	err = r.eachBody(func(rec *Record) bool { return rec.Flags&wire.FlagBatchMember == 0 }, unbounded, func(rec *Record) bool {
		res.Records++
		return cp.put(rec) == nil
	})
	if err != nil {
		w.Close()
		return res, fmt.Errorf("reading %q: %w", src, err)
	}
	return res, cp.finish()
}

func copyNotes(n map[string]string) map[string]string {
	out := make(map[string]string, len(n)+3)
	for k, v := range n {
		out[k] = v
	}
	return out
}
