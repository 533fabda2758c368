package main

import (
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
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
		{"202 to a POST", capture.Record{Seq: 3, Dir: wire.DirAgent, Kind: wire.KindNonProtocol, Flags: wire.FlagEmpty,
			HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl}},
			[]string{"\thttp\t", "POST /acp 202 Accepted"}, []string{"non-protocol", "empty"}},
		{"502 with its text", capture.Record{Seq: 4, Dir: wire.DirAgent, Kind: wire.KindNonProtocol, Body: []byte("upstream down"), Size: 13,
			HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Status: 502, Stream: wire.StreamHTTPControl}},
			[]string{"POST /acp 502 Bad Gateway upstream down"}, []string{"non-protocol"}},
		{"a message over POST is a message", capture.Record{Seq: 5, Dir: wire.DirClient, Kind: wire.KindNotification, Method: "session/cancel",
			HTTP: &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST}},
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
