package protocol

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// A lint test capture is JSONL, one record a line:
//
//	{"dir":"client"|"agent","kind":"request"…,"msg":<the exact JSON-RPC line>}
//	{"dir":"agent","text":"a non-JSON line"}   (or "hex": bytes in hex)
//	{"dir":"agent","stderr":"a log line"}
//	{"http":{…envelope…}}                      (a status-only exchange)
//	{"options":{"finished":true}}              (lint options, first line)
//
// Any record may add "http":{…} (its envelope), "flags":["partial",…],
// "conn":N (its transport connection) and "fault":{…} (what acpscope did
// to it, a Fault).
type jsonlLine struct {
	Dir     string          `json:"dir"`
	Kind    string          `json:"kind"`
	Msg     json.RawMessage `json:"msg"`
	Text    *string         `json:"text"`
	Hex     string          `json:"hex"`
	Stderr  *string         `json:"stderr"`
	HTTP    *wire.Envelope  `json:"http"`
	Flags   []string        `json:"flags"`
	Conn    uint32          `json:"conn"`
	Fault   *Fault          `json:"fault"`
	Options *struct {
		Finished bool `json:"finished"`
	} `json:"options"`
}

func loadJSONL(t testing.TB, path string) ([]Msg, LintOptions) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		msgs []Msg
		opts LintOptions
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l jsonlLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if l.Options != nil {
			opts.Finished = l.Options.Finished
			continue
		}
		msgs = append(msgs, l.msg(t, uint64(len(msgs)+1)))
	}
	return msgs, opts
}

func (l jsonlLine) msg(t testing.TB, seq uint64) Msg {
	dir := wire.DirClient
	if l.Dir == "agent" || (l.Dir == "" && l.Msg == nil) {
		dir = wire.DirAgent
	}
	var body []byte
	switch {
	case l.Msg != nil:
		body = []byte(l.Msg)
	case l.Text != nil:
		body = []byte(*l.Text)
	case l.Hex != "":
		var err error
		if body, err = hex.DecodeString(l.Hex); err != nil {
			t.Fatal(err)
		}
	case l.Stderr != nil:
		return Msg{Seq: seq, Dir: wire.DirAgent, Kind: wire.KindStderr, Body: []byte(*l.Stderr)}
	default:
		body = []byte{} // a status-only HTTP exchange
	}
	m := FromLine(seq, dir, body)
	m.HTTP, m.Conn, m.Fault = l.HTTP, l.Conn, l.Fault
	if l.Kind != "" {
		k, ok := wire.ParseKind(l.Kind)
		if !ok {
			t.Fatalf("unknown kind %q", l.Kind)
		}
		m.Kind = k // as a capture records it; analyses classify the bytes again
	}
	for _, name := range l.Flags {
		f, ok := wire.ParseFlag(name)
		if !ok {
			t.Fatalf("unknown flag %q", name)
		}
		m.Flags |= f
	}
	return m
}
