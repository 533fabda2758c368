package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/acpscope/acpscope/wire"
)

// stdioUnit checks a frame that travelled on stdio (seeds 000/001).
func (l *linter) stdioUnit(u unit) {
	seq := []uint64{u.Seq}
	switch {
	case u.Kind == wire.KindInvalidUTF8:
		l.report("stdio/invalid-utf8", seq, "%s wrote a line that is not valid UTF-8", sender(u.Dir))
	case u.Flags&wire.FlagEmpty != 0:
		l.report("stdio/empty-line", seq, "%s wrote an empty line", sender(u.Dir))
	case u.Kind == wire.KindInvalidJSON || (u.Kind == wire.KindNonProtocol && !isJSONObject(u.Body)):
		rule := "stdio/non-json-stdin"
		if u.Dir == wire.DirAgent {
			rule = "stdio/non-json-stdout"
		}
		l.report(rule, seq, "%s wrote a line that is not a JSON-RPC message: %s", sender(u.Dir), short(string(u.Body)))
	}
	if u.Flags&wire.FlagPartial != 0 {
		l.report("stdio/partial-line", seq, "%s's stream ended inside a line (%d bytes without a final newline)", sender(u.Dir), len(u.Body))
	}
	if u.Flags&wire.FlagAfterExit != 0 && u.Dir == wire.DirAgent {
		l.report("stdio/after-exit", seq, "output arrived after the agent exited (a child process still holds its stdout?)")
	}
	if u.Flags&wire.FlagCRLF != 0 {
		l.report("stdio/crlf", seq, `%s ends lines with "\r\n"`, sender(u.Dir))
	}
}

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
