package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// rawWriter writes dump --format raw: each message's bytes as they
// crossed the wire, one message per line, whatever the transport, so the
// output is NDJSON.
//
// A stdio frame's newline was its terminator and is not in its body: it
// is written back, so one direction's output is its stream byte for byte.
// A frame cut off before its newline (wire.FlagPartial, the last of its
// stream) gets none unless another message follows it. An HTTP body, SSE
// event or WebSocket message has no terminator: it gets a newline, and
// when it spans lines (pretty-printed JSON) it is compacted onto one,
// which changes only whitespace; a body that is not JSON stays as sent.
type rawWriter struct {
	owed bool // the last message written was a partial frame
}

func (rw *rawWriter) write(w *bufio.Writer, _ io.Writer, r *capture.Record) error {
	// Batch members and stderr were never on the protocol stream as
	// messages of their own, and a status-only HTTP exchange carries none.
	if r.Flags&wire.FlagBatchMember != 0 || r.Kind == wire.KindStderr {
		return nil
	}
	if _, ok := r.HTTP.Exchange(); ok {
		return nil
	}
	if rw.owed {
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	_, err := w.Write(rawLine(r))
	rw.owed = r.HTTP == nil && r.Flags&wire.FlagPartial != 0
	return err
}

// rawLine returns what raw writes for r.
func rawLine(r *capture.Record) []byte {
	body := r.Body
	switch {
	case r.HTTP == nil && r.Flags&wire.FlagPartial != 0:
		return body
	case r.HTTP == nil || !bytes.Contains(body, []byte{'\n'}):
		return append(body[:len(body):len(body)], '\n')
	}
	var line bytes.Buffer
	if json.Compact(&line, body) == nil {
		line.WriteByte('\n')
		return line.Bytes()
	}
	if bytes.HasSuffix(body, []byte{'\n'}) {
		return body
	}
	return append(body[:len(body):len(body)], '\n')
}
