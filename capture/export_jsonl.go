package capture

import (
	"bufio"
	"fmt"
	"io"
)

// ExportJSONL writes the selected session of src as JSONL (AppendJSONL
// lines, the format of acpscope dump) to w, redacted unless
// opts.NoRedact. Batches travel as the batch line; Import reads it back.
func ExportJSONL(src Source, w io.Writer, opts ExportOptions) (ExportResult, error) {
	ex, err := NewExporter(src, opts)
	if err != nil {
		return ExportResult{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	err = ex.Each(false, func(rec *Record) error {
		buf = AppendJSONL(buf[:0], rec)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("writing JSONL: %w", err)
		}
		if cap(buf) > 1<<20 {
			buf = nil // a large message's line is not kept for the next
		}
		return nil
	})
	if err != nil {
		return ex.Result(), err
	}
	return ex.Result(), bw.Flush()
}
