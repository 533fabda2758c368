package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// smallLine is the size under which a message and its newline are
// copied into one write; a larger one is written in place, then the
// newline.
const smallLine = 64 << 10

// writeLine writes msg and a newline to w. Valid JSON spread over lines
// is compacted as it is written (writeCompact); anything else goes as it
// is.
func writeLine(w io.Writer, msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") && json.Valid(msg) {
		return writeCompact(w, msg)
	}
	if len(msg) < smallLine {
		_, err := w.Write(append(append(make([]byte, 0, len(msg)+1), msg...), '\n'))
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}

// writeCompact writes msg, valid JSON, without the whitespace between its
// tokens (what json.Compact does), then a newline. It streams through a
// small buffer, so a pretty-printed body of hundreds of megabytes costs
// no second copy of itself.
func writeCompact(w io.Writer, msg []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	inString, escaped := false, false
	start := 0
	for i, b := range msg {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			bw.Write(msg[start:i])
			start = i + 1
		}
	}
	bw.Write(msg[start:])
	bw.WriteByte('\n')
	return bw.Flush()
}
