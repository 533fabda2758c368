package capture

// JSONL: one JSON object per record, one record per line. `acpscope dump
// --format jsonl`, the JSONL export and the live feed all write it, and
// ParseJSONL reads it back with the body bytes identical.
//
//	{
//	  "seq":       1,                                  sequence number in the capture, from 1
//	  "time":      "2026-11-21T12:34:56.123456789Z",   receive time, RFC 3339, UTC
//	  "t":         1795264496123456789,                the same as unix nanoseconds
//	  "dir":       "client" | "agent",                 the sender (stderr lines: "agent")
//	  "kind":      "request" | "notification" | "response" | "error" | "batch" |
//	               "invalid-json" | "non-protocol" | "invalid-utf8" | "stderr",
//	  "flags":     ["partial","crlf","batch-member","truncated","binary",
//	               "bad-version","empty","after-exit"],
//	  "conn":      0,                                  transport connection (0: stdio)
//	  "id":        7,                                  the JSON-RPC id, its exact bytes
//	  "method":    "session/prompt",                   on responses: the request's method;
//	                                                   in a proxy-chain wrapper: the inner one
//	  "hop":       1,                                  proxy-chain wrappers around it (0: left out)
//	  "session":   "sess-…",                           ACP sessionId, when known
//	  "errorCode": -32601,                             error.code of an error response
//	  "size":      123,                                bytes on the wire, without "\n"
//	  "parent":    12,                                 the batch a batch member belongs to
//	  "peer":      9,                                  the paired request or response
//	  "latencyMs": 12.5,                               on a response: time since its request
//	  "http":      {"method":"POST","path":"/acp",…},  HTTP/WebSocket envelope
//	  "fault":     {"id":1,"action":"drop",…},         what acpscope did to it (protocol.Fault)
//	  "msg":       {…},                                the message, embedded verbatim, or
//	  "text":      "…",                                the bytes as a string (UTF-8, not JSON), or
//	  "base64":    "…"                                 the bytes in standard base64
//	}
//
// Empty fields are left out. At most one of msg, text and base64 is
// present, and none when the body was not asked for. "msg" is used only
// when the bytes are exactly one valid JSON value without surrounding
// whitespace or newlines, so embedding it loses nothing; a CRLF line's
// body ends in "\r" and is therefore a "text".

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// AppendJSONL appends r as one JSONL object, without the newline.
func AppendJSONL(dst []byte, r *Record) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, r.Seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = time.Unix(0, r.Time).UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","t":`...)
	dst = strconv.AppendInt(dst, r.Time, 10)
	dst = append(dst, `,"dir":"`...)
	dst = append(dst, r.Dir.String()...)
	dst = append(dst, `","kind":"`...)
	dst = append(dst, r.Kind.String()...)
	dst = append(dst, '"')
	if names := r.Flags.Names(); len(names) > 0 {
		dst = append(dst, `,"flags":[`...)
		for i, n := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, n)
		}
		dst = append(dst, ']')
	}
	dst = appendUintField(dst, "conn", uint64(r.Conn))
	if r.ID != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, r.ID...)
	}
	dst = appendStringField(dst, "method", r.Method)
	dst = appendUintField(dst, "hop", uint64(r.Hop))
	dst = appendStringField(dst, "session", r.Session)
	if r.ErrorCode != 0 {
		dst = append(dst, `,"errorCode":`...)
		dst = strconv.AppendInt(dst, r.ErrorCode, 10)
	}
	dst = appendUintField(dst, "size", uint64(r.Size))
	dst = appendUintField(dst, "parent", r.Parent)
	dst = appendUintField(dst, "peer", r.Peer)
	if r.Latency != 0 {
		dst = append(dst, `,"latencyMs":`...)
		dst = strconv.AppendFloat(dst, float64(r.Latency)/1e6, 'f', -1, 64)
	}
	if r.HTTP != nil {
		env, _ := json.Marshal(r.HTTP) // strings and a map of strings: cannot fail
		dst = append(dst, `,"http":`...)
		dst = append(dst, env...)
	}
	if r.Fault != nil {
		f, _ := json.Marshal(r.Fault) // strings and numbers: cannot fail
		dst = append(dst, `,"fault":`...)
		dst = append(dst, f...)
	}
	if r.Body != nil {
		dst = appendBody(dst, r.Body, r.validJSON)
	}
	return append(dst, '}')
}

// appendBody writes the body as msg, text or base64, whichever keeps the
// bytes exactly and reads best; validJSON says body is known to be JSON.
func appendBody(dst, body []byte, validJSON bool) []byte {
	switch {
	case embeddable(body, validJSON):
		dst = append(dst, `,"msg":`...)
		return appendInSteps(dst, body)
	case utf8.Valid(body):
		dst = append(dst, `,"text":`...)
		return appendString(dst, string(body))
	}
	dst = append(dst, `,"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, body)
	return append(dst, '"')
}

// embeddable reports whether body can sit verbatim in a JSONL line and
// come back byte for byte: one JSON object or array, nothing around it,
// no newline inside. validJSON skips the check that it is JSON.
func embeddable(body []byte, validJSON bool) bool {
	n := len(body)
	if n < 2 || !(body[0] == '{' && body[n-1] == '}' || body[0] == '[' && body[n-1] == ']') {
		return false
	}
	return bytes.IndexByte(body, '\n') < 0 && utf8.Valid(body) && (validJSON || json.Valid(body))
}

func appendUintField(dst []byte, name string, v uint64) []byte {
	if v == 0 {
		return dst
	}
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return strconv.AppendUint(dst, v, 10)
}

func appendStringField(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return appendString(dst, v)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. s must be valid UTF-8 (or it
// is written as is, which ParseJSONL would not return exactly).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonlRecord is the decoding side of the schema above.
type jsonlRecord struct {
	Seq       uint64          `json:"seq"`
	Time      string          `json:"time"`
	T         *int64          `json:"t"`
	Dir       string          `json:"dir"`
	Kind      string          `json:"kind"`
	Flags     []string        `json:"flags"`
	Conn      uint32          `json:"conn"`
	ID        json.RawMessage `json:"id"`
	Method    string          `json:"method"`
	Hop       uint8           `json:"hop"`
	Session   string          `json:"session"`
	ErrorCode int64           `json:"errorCode"`
	Size      int64           `json:"size"`
	Parent    uint64          `json:"parent"`
	Peer      uint64          `json:"peer"`
	LatencyMs float64         `json:"latencyMs"`
	HTTP      *wire.Envelope  `json:"http"`
	Fault     *protocol.Fault `json:"fault"`
	Msg       rawSpan         `json:"msg"`
	Text      rawSpan         `json:"text"`
	Base64    rawSpan         `json:"base64"`
}

// rawSpan keeps a value's bytes as a slice of the line being decoded
// rather than a copy: a body of hundreds of megabytes is then held once.
// encoding/json hands UnmarshalJSON a slice of its input, which the
// caller of Unmarshal owns and does not change until the span is used.
type rawSpan []byte

func (s *rawSpan) UnmarshalJSON(b []byte) error {
	*s = b
	return nil
}

var errJSONL = errors.New("not an acpscope JSONL record")

// ParseJSONL reads one line written by AppendJSONL (a trailing newline is
// allowed). Body is nil when the line carries none.
func ParseJSONL(line []byte) (Record, error) {
	return parseJSONL(line, false)
}

// parseJSONL is ParseJSONL; with keep, a "msg" body is a slice of line
// rather than a copy, so that a large one is held once.
func parseJSONL(line []byte, keep bool) (Record, error) {
	var j jsonlRecord
	if err := json.Unmarshal(line, &j); err != nil {
		return Record{}, fmt.Errorf("%w: %v", errJSONL, err)
	}
	r := Record{Msg: protocol.Msg{Seq: j.Seq, Conn: j.Conn, Method: j.Method, Hop: j.Hop, Session: j.Session, Parent: j.Parent, HTTP: j.HTTP, Fault: j.Fault},
		ErrorCode: j.ErrorCode, Size: j.Size, Peer: j.Peer}
	switch j.Dir {
	case "client":
		r.Dir = wire.DirClient
	case "agent":
		r.Dir = wire.DirAgent
	default:
		return Record{}, fmt.Errorf("%w: dir %q is neither client nor agent", errJSONL, j.Dir)
	}
	kind, ok := wire.ParseKind(j.Kind)
	if !ok {
		return Record{}, fmt.Errorf("%w: unknown kind %q", errJSONL, j.Kind)
	}
	r.Kind = kind
	for _, name := range j.Flags {
		f, ok := wire.ParseFlag(name)
		if !ok {
			return Record{}, fmt.Errorf("%w: unknown flag %q", errJSONL, name)
		}
		r.Flags |= f
	}
	if err := j.time(&r); err != nil {
		return Record{}, err
	}
	if len(j.ID) > 0 {
		r.ID = bytes.Clone(j.ID)
	}
	r.Latency = time.Duration(j.LatencyMs*1e6 + copysignHalf(j.LatencyMs))
	body, err := j.body(keep)
	if err != nil {
		return Record{}, err
	}
	r.Body = body
	return r, nil
}

// copysignHalf rounds the conversion to nanoseconds to the nearest.
func copysignHalf(x float64) float64 {
	if x < 0 {
		return -0.5
	}
	return 0.5
}

func (j *jsonlRecord) time(r *Record) error {
	if j.T != nil {
		r.Time = *j.T
		return nil
	}
	if j.Time == "" {
		return fmt.Errorf("%w: no time", errJSONL)
	}
	t, err := time.Parse(time.RFC3339Nano, j.Time)
	if err != nil {
		return fmt.Errorf("%w: time: %v", errJSONL, err)
	}
	r.Time = t.UnixNano()
	return nil
}

func (j *jsonlRecord) body(keep bool) ([]byte, error) {
	n := 0
	for _, present := range []bool{j.Msg != nil, j.Text != nil, j.Base64 != nil} {
		if present {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, fmt.Errorf("%w: more than one of msg, text and base64", errJSONL)
	case j.Msg != nil && keep:
		return j.Msg, nil
	case j.Msg != nil:
		return bytes.Clone(j.Msg), nil
	case j.Text != nil:
		b, err := unquote(j.Text)
		if err != nil {
			return nil, fmt.Errorf("%w: text: %v", errJSONL, err)
		}
		return b, nil
	case j.Base64 != nil:
		lit, err := unquote(j.Base64)
		if err != nil {
			return nil, fmt.Errorf("%w: base64: %v", errJSONL, err)
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(lit)))
		n, err := base64.StdEncoding.Decode(b, lit)
		b = b[:n]
		if err != nil {
			return nil, fmt.Errorf("%w: base64: %v", errJSONL, err)
		}
		return b, nil
	}
	return nil, nil
}

// unquote decodes a JSON string literal into new memory of its own, once:
// decoding into a Go string and converting that would copy a text body of
// hundreds of megabytes twice. Unmarshal has already checked the literal.
func unquote(lit []byte) ([]byte, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, errors.New("not a string")
	}
	lit = lit[1 : len(lit)-1]
	out := make([]byte, 0, len(lit))
	for len(lit) > 0 {
		k := bytes.IndexByte(lit, '\\')
		if k < 0 {
			return append(out, lit...), nil
		}
		out = append(out, lit[:k]...)
		if k+1 >= len(lit) {
			return nil, errors.New("string ends in a backslash")
		}
		c := lit[k+1]
		lit = lit[k+2:]
		switch c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			var r rune
			var err error
			if r, lit, err = unicodeEscape(lit); err != nil {
				return nil, err
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, fmt.Errorf("bad escape \\%c", c)
		}
	}
	return out, nil
}

// unicodeEscape reads the XXXX of a \uXXXX escape at the start of b, and
// the low half that must follow a high surrogate; a lone surrogate reads
// as U+FFFD, as encoding/json has it.
func unicodeEscape(b []byte) (rune, []byte, error) {
	r, ok := hex4(b)
	if !ok {
		return 0, nil, errors.New("bad \\u escape")
	}
	b = b[4:]
	if !utf16.IsSurrogate(r) {
		return r, b, nil
	}
	if len(b) >= 6 && b[0] == '\\' && b[1] == 'u' {
		if lo, ok := hex4(b[2:]); ok {
			if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
				return dec, b[6:], nil
			}
		}
	}
	return utf8.RuneError, b, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(v), err == nil
}
