package cli

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// TestWriteRowHTTPExchange: dump shows a status-only HTTP exchange as the
// exchange, not as an empty non-protocol line from the agent.
func TestWriteRowHTTPExchange(t *testing.T) {
	for _, tt := range []struct {
		name      string
		rec       capture.Record
		want, not []string
	}{
		{"202 to a POST", capture.Record{Msg: protocol.Msg{Seq: 3, Dir: wire.DirAgent, Kind: wire.KindNonProtocol, Flags: wire.FlagEmpty, HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl}}},
			[]string{"\thttp\t", "POST /acp 202 Accepted"}, []string{"non-protocol", "empty"}},
		{"502 with its text", capture.Record{Msg: protocol.Msg{Seq: 4, Dir: wire.DirAgent, Kind: wire.KindNonProtocol, Body: []byte("upstream down"), HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Status: 502, Stream: wire.StreamHTTPControl}}, Size: 13},
			[]string{"POST /acp 502 Bad Gateway upstream down"}, []string{"non-protocol"}},
		{"a message over POST is a message", capture.Record{Msg: protocol.Msg{Seq: 5, Dir: wire.DirClient, Kind: wire.KindNotification, Method: "session/cancel", HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST}}},
			[]string{"notification", "session/cancel"}, []string{"\thttp\t"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sb strings.Builder
			writeRow(&sb, &tt.rec)
			for _, w := range tt.want {
				if !strings.Contains(sb.String(), w) {
					t.Errorf("row %q lacks %q", sb.String(), w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(sb.String(), n) {
					t.Errorf("row %q has %q", sb.String(), n)
				}
			}
		})
	}
}

// TestTailColumnsAlignAcrossBatches: rows written in separate batches
// still line up, since tail prints as records arrive.
func TestTailColumnsAlignAcrossBatches(t *testing.T) {
	var sb strings.Builder
	cols := &fixedColumns{w: &sb, widths: tailWidths}
	recs := []capture.Record{
		{Msg: protocol.Msg{Seq: 1, Dir: wire.DirClient, Kind: wire.KindRequest, ID: []byte("1"), Method: "initialize"}, Size: 90},
		{Msg: protocol.Msg{Seq: 12345, Dir: wire.DirAgent, Kind: wire.KindNotification, Method: "session/update", Session: "sess_1"}, Size: 263},
		{Msg: protocol.Msg{Seq: 7, Dir: wire.DirAgent, Kind: wire.KindResponse, ID: []byte("1"), Method: "initialize"}, Size: 60, Latency: 1500000},
	}
	if _, err := io.WriteString(cols, rowHeader+"\n"); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		writeRow(cols, &recs[i]) // one batch per row, as a live feed delivers them
	}
	lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines:\n%s", len(lines), sb.String())
	}
	column := func(line, word string) int { // in characters: the arrows are wider in bytes
		i := strings.Index(line, word)
		if i < 0 {
			return -1
		}
		return utf8.RuneCountInString(line[:i])
	}
	header := lines[0]
	for i, l := range lines[1:] {
		if got, want := column(l, recs[i].Method), column(header, "METHOD"); got != want {
			t.Errorf("METHOD column at %d in %q, header has it at %d:\n%s", got, l, want, sb.String())
		}
	}
}

// TestOneSizeFormat: sizes read as ls, gc and stats print them, in the
// message table too; show adds the exact count where that rounds.
func TestOneSizeFormat(t *testing.T) {
	var sb strings.Builder
	writeRow(&sb, &capture.Record{Msg: protocol.Msg{Seq: 1, Dir: wire.DirClient, Kind: wire.KindRequest, Method: "session/prompt"}, Size: 69632})
	if !strings.Contains(sb.String(), "\t68.0 KiB\t") {
		t.Errorf("row %q: want the size as 68.0 KiB", sb.String())
	}
	for _, tt := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {69632, "68.0 KiB (69632 bytes)"}} {
		if got := sizeText(tt.n); got != tt.want {
			t.Errorf("sizeText(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
