package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Message is what Classify learns from one frame. Byte slices alias the
// frame passed in; copy them to keep them past the frame's lifetime.
type Message struct {
	Kind  Kind
	Flags Flags
	// ID holds the exact bytes of the "id" member (`7`, `"7"`, `null`),
	// or nil when the frame has none.
	ID []byte
	// Method is the decoded "method" string of requests and notifications.
	Method string
	// SessionID is params.sessionId when it is a string. Responses carry
	// none on the wire; Pairer attributes them through their request.
	SessionID string
	// Result and Error hold the exact bytes of those members, if present.
	Result []byte
	Error  []byte
	// ErrorCode is error.code when it is an integer.
	ErrorCode    int64
	HasErrorCode bool
	// Members are the elements of a batch, each classified on its own.
	Members []Member
}

// Member is one element of a batch: its span within the batch frame and
// what it is.
type Member struct {
	Start, End int
	Message
}

// Classify tells what one frame is. line is the frame without its
// terminating "\n"; a trailing "\r" is tolerated and flagged.
func Classify(line []byte) Message {
	var m Message
	if n := len(line); n > 0 && line[n-1] == '\r' {
		m.Flags |= FlagCRLF
		line = line[:n-1]
	}
	// Only JSON's own white space may surround a message: "\v", "\f" or
	// U+00A0 next to an object make it invalid JSON, not a message.
	trimmed := bytes.Trim(line, jsonSpace)
	switch {
	case len(bytes.TrimSpace(line)) == 0:
		m.Kind = KindNonProtocol
		m.Flags |= FlagEmpty
	case !utf8.Valid(line):
		m.Kind = KindInvalidUTF8
	case trimmed[0] != '{' && trimmed[0] != '[':
		m.Kind = KindNonProtocol
	case trimmed[0] == '{':
		// Objects are validated while their members are read: one pass.
		if !classifyObject(trimmed, &m, true) {
			m = Message{Kind: KindInvalidJSON, Flags: m.Flags &^ FlagBadVersion}
		}
	case !validJSON(trimmed):
		m.Kind = KindInvalidJSON
	default:
		classifyBatch(trimmed, len(line)-len(bytes.TrimLeft(line, jsonSpace)), &m)
	}
	return m
}

// jsonSpace is the white space RFC 8259 allows around a value.
const jsonSpace = " \t\n\r"

// classifyBatch classifies each element of a valid JSON array. offset is
// where trimmed starts within the frame, so member spans index the frame.
func classifyBatch(arr []byte, offset int, m *Message) {
	m.Kind = KindBatch
	forEachElement(arr, func(start, end int) {
		var member Member
		member.Start, member.End = offset+start, offset+end
		el := arr[start:end]
		if el[0] == '{' {
			classifyObject(el, &member.Message, false)
		} else {
			member.Kind = KindNonProtocol
		}
		member.Flags |= FlagBatchMember
		m.Members = append(m.Members, member)
	})
}

// classifyObject fills m from a JSON object, validating it as it reads
// when validate is set; it reports false when the object is invalid.
// params is read member by member in the same pass, for its sessionId:
// in a session/update it is nearly the whole message.
func classifyObject(obj []byte, m *Message, validate bool) bool {
	var version, method, sessionID []byte
	hasID, hasMethod := false, false
	it := newMembers(obj, validate)
	for {
		key, start, ok := it.nextKey()
		if !ok {
			break
		}
		var end int
		if string(key) == "params" && start < len(obj) && obj[start] == '{' {
			end, sessionID, ok = paramsSession(obj, start, it.depth+1, validate)
		} else if validate {
			end, ok = validValueAt(obj, start, it.depth)
		} else {
			end, ok = skipValue(obj, start), true
		}
		if !it.valueEnds(end, ok) {
			break
		}
		value := obj[start:end]
		switch string(key) {
		case "jsonrpc":
			version = value
		case "id":
			m.ID, hasID = value, true
		case "method":
			method, hasMethod = value, true
		case "params":
			if value[0] != '{' {
				sessionID = nil // a later non-object params has no sessionId
			}
		case "result":
			m.Result = value
		case "error":
			m.Error = value
		}
	}
	valid := !it.bad
	if string(version) != `"2.0"` {
		m.Flags |= FlagBadVersion
	}
	if hasMethod {
		m.Method = methodName(method)
	}
	m.SessionID = unquote(sessionID)
	switch {
	case hasMethod && hasID:
		m.Kind = KindRequest
	case hasMethod:
		m.Kind = KindNotification
	case m.Error != nil:
		m.Kind = KindError
		m.ErrorCode, m.HasErrorCode = errorCode(m.Error)
	case m.Result != nil:
		m.Kind = KindResponse
	default:
		m.Kind = KindNonProtocol
	}
	return valid
}

// paramsSession reads the params object at b[start] (at depth) and
// returns its end and the value of its last "sessionId" member, the one a
// JSON decoder would keep.
func paramsSession(b []byte, start, depth int, validate bool) (end int, sessionID []byte, ok bool) {
	it := innerMembers(b, start, depth, validate)
	for {
		key, value, ok := it.next()
		if !ok {
			break
		}
		if string(key) == "sessionId" {
			sessionID = value
		}
	}
	return it.end, sessionID, !it.bad
}

func errorCode(errObj []byte) (int64, bool) {
	if errObj[0] != '{' {
		return 0, false
	}
	raw := Value(errObj, "code")
	if raw == nil {
		return 0, false
	}
	code, err := strconv.ParseInt(string(raw), 10, 64)
	return code, err == nil
}

// StringMember returns the decoded string value of key in the valid JSON
// object obj, or "" when it is absent or not a string.
func StringMember(obj []byte, key string) string {
	v := Value(obj, key)
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	return unquote(v)
}

// Value returns the exact bytes of key's value in the valid JSON object
// obj, or nil. Keys are compared after unescaping, exactly (JSON-RPC
// member names are case-sensitive, unlike encoding/json's matching).
func Value(obj []byte, key string) []byte {
	for it := newMembers(obj, false); ; {
		k, v, ok := it.next()
		if !ok {
			return nil
		}
		if string(k) == key {
			return v
		}
	}
}

// frequentMethods are the method names most messages carry: handing out
// these strings instead of a fresh copy saves an allocation per message
// on the capture path. Any other name is copied as usual.
var frequentMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{
		"session/update", "session/prompt", "session/new", "session/load", "session/cancel",
		"session/request_permission", "initialize", "authenticate",
		"fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output",
	} {
		m[name] = name
	}
	return m
}()

// methodName decodes a method's string literal.
func methodName(lit []byte) string {
	if len(lit) >= 2 && lit[0] == '"' {
		if name, ok := frequentMethods[string(lit[1:len(lit)-1])]; ok {
			return name
		}
	}
	return unquote(lit)
}

// unquote decodes a JSON string literal; it returns "" for non-strings.
func unquote(lit []byte) string {
	if len(lit) < 2 || lit[0] != '"' {
		return ""
	}
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

// Quote returns s as a JSON string literal, without the HTML escaping
// encoding/json applies by default, so "<redacted>" reads as itself when
// spliced into a message.
func Quote(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
