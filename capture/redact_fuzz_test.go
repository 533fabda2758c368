package capture

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
)

// planted are secrets FuzzRedactor writes into a string of any message:
// what is inserted, and the part that must not survive.
var planted = []struct{ text, core string }{
	{fakeGitHub, "FAKEEXAMPLE0123456789abcdefghijklm"},
	{fakeAnthropic, "FAKEEXAMPLE0123456789abcdefghijklmnop"},
	{fakeJWT, "FAKEsignatureEXAMPLE0123456789"},
	{fakeAWSID + " " + fakeAWSSecret, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{`-----BEGIN RSA PRIVATE KEY-----\nFAKEEXAMPLEpem0123\n-----END RSA PRIVATE KEY-----`, "FAKEEXAMPLEpem0123"},
	{"https://u:FAKEurlEXAMPLE9@h/", "FAKEurlEXAMPLE9"},
	{"DB_PASSWORD=FAKEkvEXAMPLE7", "FAKEkvEXAMPLE7"},
	{"--token FAKEflagEXAMPLE5", "FAKEflagEXAMPLE5"},
	{"Bearer FAKEbearerEXAMPLE3", "FAKEbearerEXAMPLE3"},
}

// redactionMark is what redaction writes in place of a secret.
var redactionMark = regexp.MustCompile(`"<redacted>"|<redacted(?::token#[0-9]+)?>`)

// FuzzRedactor plants a secret at the start of one string of a JSON
// document and checks: the output is JSON, the secret is gone, and every
// byte outside the redacted spans is unchanged.
func FuzzRedactor(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"hi"}]}}`), "session/prompt", uint8(0), uint8(2))
	f.Add([]byte(`{"params":{"env":[{"name":"A","value":"b"}],"args":["--x","y"]}}`), "terminal/create", uint8(4), uint8(5))
	f.Add([]byte(`["a\nb","\u0041",{"k\"ey":"v\\"}]`), "", uint8(6), uint8(1))
	f.Add([]byte(`"x"`), "", uint8(3), uint8(0))
	f.Add([]byte(`{"method":"session/new","params":{"mcpServers":[{"name":"n","env":[{"name":"A","value":"b"}]}]}}`), "session/new", uint8(0), uint8(6))
	f.Add([]byte(`{"method":"authenticate","params":{"methodId":"m"}}`), "authenticate", uint8(1), uint8(3))
	r, _ := NewRedactor(RedactOptions{})
	f.Fuzz(func(t *testing.T, doc []byte, method string, which, where uint8) {
		p := planted[int(which)%len(planted)]
		if !json.Valid(doc) || bytes.Contains(doc, []byte(p.core)) || redactionMark.Match(doc) {
			return
		}
		var quotes []int
		_ = WalkJSON(doc, func(_ []string, start, _ int) bool {
			if doc[start] == '"' {
				quotes = append(quotes, start)
			}
			return true
		})
		if len(quotes) == 0 {
			return
		}
		at := quotes[int(where)%len(quotes)] + 1
		in := append(append(append([]byte(nil), doc[:at]...), p.text+" "...), doc[at:]...)
		out, _ := r.Message(method, in)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON after redaction:\n in  %s\n out %s", in, out)
		}
		if bytes.Contains(out, []byte(p.core)) {
			t.Fatalf("planted secret survived:\n in  %s\n out %s", in, out)
		}
		if !onlyMarksChanged(in, out) {
			t.Fatalf("bytes changed outside redactions:\n in  %s\n out %s", in, out)
		}
	})
}

// onlyMarksChanged reports whether out is in with some spans replaced by
// redaction marks: the text between marks appears in in, in order, the
// first piece at its start and the last at its end.
func onlyMarksChanged(in, out []byte) bool {
	pieces := redactionMark.Split(string(out), -1)
	if len(pieces) == 1 {
		return bytes.Equal(in, out)
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if !bytes.HasPrefix(in, []byte(first)) || !bytes.HasSuffix(in[len(first):], []byte(last)) {
		return false
	}
	rest := in[len(first) : len(in)-len(last)]
	for _, p := range pieces[1 : len(pieces)-1] {
		k := bytes.Index(rest, []byte(p))
		if k < 0 {
			return false
		}
		rest = rest[k+len(p):]
	}
	return true
}
