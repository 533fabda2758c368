package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// ExportJSONL writes the selected session of src as JSONL to w, one
// record per line, redacted unless opts.NoRedact. Import reads it back.
func ExportJSONL(src Source, w io.Writer, opts ExportOptions) (ExportResult, error) {
	var res ExportResult
	sel, err := SelectSession(src, opts.Session)
	if err != nil {
		return res, err
	}
	res.Session = sel.Session
	red, err := NewRedactor(opts.Redact)
	if err != nil {
		return res, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for i, seq := range sel.Seqs {
		rec, err := src.Record(seq)
		if err == nil {
			rec.Body, err = src.Body(seq)
		}
		if err != nil {
			return res, fmt.Errorf("reading record %d: %w", seq, err)
		}
		if rec.Kind == wire.KindBatch {
			continue // its members follow as their own records
		}
		if !opts.NoRedact {
			res.Redactions = append(res.Redactions, red.Record(&rec)...)
		}
		buf = appendExportLine(buf[:0], &rec)
		if _, err := bw.Write(append(buf, '\n')); err != nil {
			return res, fmt.Errorf("writing JSONL: %w", err)
		}
		res.Records++
		if opts.Progress != nil && i%5000 == 4999 {
			opts.Progress(uint64(i+1), uint64(len(sel.Seqs)))
		}
	}
	return res, bw.Flush()
}

// appendExportLine encodes one record as the minimal import form ("dir"
// and the raw "msg") plus what a reader of the dump filters on. The
// message goes in verbatim; one that is not JSON, holds a newline (it would
// break the line) or is a stderr line travels as a JSON string instead.
// (When the store's AppendJSONL is available this defers to it, so dump
// and export write the same lines.)
func appendExportLine(dst []byte, r *Record) []byte {
	dir := r.Dir.String()
	if r.Kind == wire.KindStderr {
		dir = "stderr"
	}
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, r.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst = append(dst, encodeString(time.Unix(0, r.Time).UTC().Format(time.RFC3339Nano))...)
	dst = append(dst, `,"dir":`...)
	dst = append(dst, encodeString(dir)...)
	dst = append(dst, `,"kind":`...)
	dst = append(dst, encodeString(r.Kind.String())...)
	if r.Method != "" {
		dst = append(append(dst, `,"method":`...), encodeString(r.Method)...)
	}
	if r.Session != "" {
		dst = append(append(dst, `,"session":`...), encodeString(r.Session)...)
	}
	dst = append(dst, `,"msg":`...)
	if r.Kind == wire.KindStderr || bytes.ContainsAny(r.Body, "\n") || !json.Valid(r.Body) {
		dst = append(dst, encodeString(string(r.Body))...)
	} else {
		dst = append(dst, r.Body...)
	}
	return append(dst, '}')
}
