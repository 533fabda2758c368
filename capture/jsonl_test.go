package capture

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

func jsonlCases() []Record {
	return []Record{
		{Msg: protocol.Msg{Seq: 1, Time: 1795264496123456789, Dir: wire.DirClient, Kind: wire.KindRequest, ID: []byte(`"a\"b"`), Method: "session/prompt", Session: "s1", Body: []byte(`{"jsonrpc":"2.0","id":"a\"b","method":"session/prompt"}`)}, Size: 10, Peer: 2},
		{Msg: protocol.Msg{Seq: 2, Time: 1, Dir: wire.DirAgent, Kind: wire.KindError, ID: []byte(`null`), Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601}}`)}, ErrorCode: -32601, Latency: 1234567 * time.Nanosecond, Peer: 1},
		{Msg: protocol.Msg{Seq: 3, Time: 5, Dir: wire.DirAgent, Kind: wire.KindNotification, Flags: wire.FlagCRLF, Body: []byte("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r")}},
		{Msg: protocol.Msg{Seq: 4, Dir: wire.DirAgent, Kind: wire.KindInvalidUTF8, Body: []byte("\xff\xfe\x00")}},
		{Msg: protocol.Msg{Seq: 5, Dir: wire.DirAgent, Kind: wire.KindStderr, Body: []byte("tab\there \"quoted\" \\ \x01 ünïcode")}},
		{Msg: protocol.Msg{Seq: 6, Dir: wire.DirClient, Kind: wire.KindNonProtocol, Flags: wire.FlagEmpty, Body: []byte{}}},
		{Msg: protocol.Msg{Seq: 7, Dir: wire.DirClient, Kind: wire.KindRequest, Conn: 3, Method: "x", Body: []byte(` {"a":1} `), HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Status: 200, Headers: map[string]string{"Acp-X": "1"}}}},
		{Msg: protocol.Msg{Seq: 8, Dir: wire.DirClient, Kind: wire.KindBatch, Flags: wire.FlagBatchMember | wire.FlagTruncated, Parent: 3}},
		{Msg: protocol.Msg{Seq: 9, Dir: wire.DirAgent, Kind: wire.KindInvalidJSON, Body: []byte("{\n\"pretty\": true\n}")}},
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	for _, rec := range jsonlCases() {
		t.Run(rec.Kind.String(), func(t *testing.T) {
			line := AppendJSONL(nil, &rec)
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line holds a newline: %s", line)
			}
			got, err := ParseJSONL(line)
			if err != nil {
				t.Fatalf("ParseJSONL(%s): %v", line, err)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Errorf("round trip of %s\n got %+v\nwant %+v", line, got, rec)
			}
		})
	}
}

func TestJSONLShape(t *testing.T) {
	tests := []struct {
		rec      Record
		contains []string
		absent   []string
	}{
		{jsonlCases()[0], []string{`"msg":{"jsonrpc"`, `"id":"a\"b"`, `"time":"2026-`, `"dir":"client"`, `"kind":"request"`}, []string{`"text"`, `"conn"`, `"parent"`}},
		{jsonlCases()[2], []string{`"text":"{\"jsonrpc`, `\r"`, `"flags":["crlf"]`}, []string{`"msg"`}},
		{jsonlCases()[3], []string{`"base64":"//4A"`}, nil},
		{jsonlCases()[7], []string{`"flags":["batch-member","truncated"]`}, []string{`"msg"`, `"text"`, `"base64"`}},
	}
	for _, tt := range tests {
		line := string(AppendJSONL(nil, &tt.rec))
		for _, c := range tt.contains {
			if !strings.Contains(line, c) {
				t.Errorf("%s lacks %s", line, c)
			}
		}
		for _, a := range tt.absent {
			if strings.Contains(line, a) {
				t.Errorf("%s has %s", line, a)
			}
		}
	}
}

func TestParseJSONLErrors(t *testing.T) {
	for _, line := range []string{
		``, `[]`, `{"seq":1}`, `{"seq":1,"t":1,"dir":"up","kind":"request"}`,
		`{"seq":1,"t":1,"dir":"agent","kind":"nope"}`, `{"seq":1,"t":1,"dir":"agent","kind":"request","flags":["x"]}`,
		`{"seq":1,"t":1,"dir":"agent","kind":"stderr","text":"a","base64":"YQ=="}`,
		`{"seq":1,"t":1,"dir":"agent","kind":"stderr","base64":"!!"}`,
	} {
		if _, err := ParseJSONL([]byte(line)); err == nil {
			t.Errorf("ParseJSONL(%s) succeeded", line)
		}
	}
}

func FuzzParseJSONL(f *testing.F) {
	for _, rec := range jsonlCases() {
		f.Add(AppendJSONL(nil, &rec))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseJSONL(line)
		if err != nil {
			return
		}
		again, err := ParseJSONL(AppendJSONL(nil, &rec))
		if err != nil {
			t.Fatalf("re-parsing our own output: %v", err)
		}
		if !bytes.Equal(again.Body, rec.Body) || again.Seq != rec.Seq || again.Kind != rec.Kind || again.Flags != rec.Flags {
			t.Fatalf("round trip changed the record: %+v → %+v", rec, again)
		}
	})
}
