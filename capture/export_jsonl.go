package capture

import (
	"bufio"
	"fmt"
	"io"

	"github.com/acpscope/acpscope/wire"
)

// ExportJSONL writes the selected session of src as JSONL (AppendJSONL
// lines, the format of acpscope dump) to w, redacted unless
// opts.NoRedact. Batches travel as the batch line; Import reads it back.
func ExportJSONL(src Source, w io.Writer, opts ExportOptions) (ExportResult, error) {
	sel, red, res, err := startExport(src, opts)
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
		if rec.Flags&wire.FlagBatchMember != 0 {
			continue // the batch line itself carries the member's bytes
		}
		res.Redactions = append(res.Redactions, redactRecord(red, &rec, opts)...)
		buf = AppendJSONL(buf[:0], &rec)
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
