package fault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/acpscope/acpscope/capture"
)

// change applies the rule's body changes to msg, in order: replace,
// rewrite, pad, truncate, corrupt. It returns the new body and notes on
// what could not be done (a rewrite of a body that is not JSON).
func change(r *Rule, rec *capture.Record, msg []byte, rng *rand.Rand) ([]byte, []string) {
	out := msg
	var notes []string
	if r.Replace != nil {
		out = expand(r.Replace, rec)
	}
	if len(r.Rewrite) > 0 || r.Pad != nil {
		doc, err := decodeJSON(out)
		if err != nil {
			notes = append(notes, "not rewritten: the body is not JSON")
		} else {
			for _, rw := range r.Rewrite {
				var v any
				_ = decodeJSONInto(rw.Value, &v) // the parser wrote it
				doc = setPath(doc, rw.Path, v)
			}
			if r.Pad != nil {
				doc = setPath(doc, r.Pad.Path, padText(doc, r.Pad))
			}
			if b, err := json.Marshal(doc); err == nil {
				out = b
			}
		}
	}
	if r.Truncate > 0 && r.Truncate < len(out) {
		out = out[:r.Truncate]
	}
	if r.Corrupt > 0 && len(out) > 0 {
		out = corrupt(out, r.Corrupt, rng)
	}
	if bytes.Equal(out, msg) {
		return msg, notes
	}
	return out, notes
}

// corrupt overwrites n bytes at random places with random bytes, never a
// newline: the message must stay one line, or it would become two.
func corrupt(msg []byte, n int, rng *rand.Rand) []byte {
	out := bytes.Clone(msg)
	for range n {
		i := rng.IntN(len(out))
		c := byte(rng.IntN(255))
		if c >= '\n' {
			c++
		}
		out[i] = c
	}
	return out
}

// padText is the filler for Pad: the string already at the path, if
// any, grown to Size bytes.
func padText(doc any, p *Pad) string {
	cur, _ := getPath(doc, p.Path).(string)
	if int64(len(cur)) >= p.Size {
		return cur
	}
	return cur + strings.Repeat("x", int(p.Size)-len(cur))
}

func decodeJSON(b []byte) (any, error) {
	var v any
	return v, decodeJSONInto(b, &v)
}

// decodeJSONInto decodes keeping numbers as written (json.Number).
func decodeJSONInto(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// setPath sets the value at path in doc, making objects on the way, and
// returns the document (a new root when doc was not an object).
func setPath(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	key := path[0]
	switch t := doc.(type) {
	case map[string]any:
		t[key] = setPath(t[key], path[1:], v)
		return t
	case []any:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(t) {
			t[i] = setPath(t[i], path[1:], v)
			return t
		}
	}
	return map[string]any{key: setPath(nil, path[1:], v)}
}

func getPath(doc any, path []string) any {
	for _, key := range path {
		switch t := doc.(type) {
		case map[string]any:
			doc = t[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			doc = t[i]
		default:
			return nil
		}
	}
	return doc
}

// answerFor builds the canned response to request rec.
func answerFor(a *Answer, rec *capture.Record) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), rec.ID...)
	if a.Error != nil {
		b = append(b, `,"error":`...)
		b = append(b, a.Error...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, expand(a.Result, rec)...)
	}
	return append(b, '}')
}

// expand fills {{id}}, {{sessionId}} and {{method}} with the matched
// message's: the id as its exact JSON bytes, the others as the text
// inside a JSON string.
func expand(msg []byte, rec *capture.Record) []byte {
	if !bytes.Contains(msg, []byte("{{")) {
		return msg
	}
	id := rec.ID
	if id == nil {
		id = []byte("null")
	}
	r := strings.NewReplacer("{{id}}", string(id), "{{sessionId}}", jsonInner(rec.Session), "{{method}}", jsonInner(rec.Method))
	return []byte(r.Replace(string(msg)))
}

// jsonInner is s escaped for use inside a JSON string, without quotes.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
