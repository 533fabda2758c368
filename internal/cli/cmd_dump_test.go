package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/proxy"
	"github.com/acpscope/acpscope/wire"
)

// TestDumpRawOneMessagePerLine: dump --format raw writes each message on a
// line of its own for every transport, so its output is NDJSON: stdio
// frames as their stream carried them (a direction's output is its stream
// byte for byte), HTTP bodies and SSE events (which have no newline of
// their own, and may span lines) one per line.
func TestDumpRawOneMessagePerLine(t *testing.T) {
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"_x/pretty\"\n}"
	tests := []struct {
		name   string
		record func(t *testing.T) string
		filter string
		want   string
	}{
		{"stdio", recordStdio, "",
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n" +
				"{\"jsonrpc\":\"2.0\",\"method\":\"_x/crlf\"}\r\n" +
				"{\"jsonrpc\":\"2.0\",\"method\":\"_x/cut\n" + // cut off: the line break is raw's
				"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"},
		{"stdio, one direction byte for byte", recordStdio, "dir:client",
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n" +
				"{\"jsonrpc\":\"2.0\",\"method\":\"_x/crlf\"}\r\n" +
				"{\"jsonrpc\":\"2.0\",\"method\":\"_x/cut"},
		{"http", func(t *testing.T) string {
			return recordHTTPBodies(t, []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n",
				`{"jsonrpc":"2.0","method":"_x/one"}`,
				pretty,
			}, []string{`{"jsonrpc":"2.0","method":"_x/sse"}`, pretty})
		}, "",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
				`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n" +
				`{"jsonrpc":"2.0","method":"_x/one"}` + "\n" +
				`{"jsonrpc":"2.0","method":"_x/pretty"}` + "\n" +
				`{"jsonrpc":"2.0","method":"_x/sse"}` + "\n" +
				`{"jsonrpc":"2.0","method":"_x/pretty"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"dump", tt.record(t), "--format", "raw"}
			if tt.filter != "" {
				args = append(args, "--filter", tt.filter)
			}
			res := runCLI(t, nil, args...)
			if res.code != 0 {
				t.Fatalf("dump: exit %d: %s", res.code, res.stderr)
			}
			if res.stdout != tt.want {
				t.Errorf("dump --format raw wrote\n%q\nwant\n%q", res.stdout, tt.want)
			}
		})
	}
	help := runCLI(t, nil, "dump", "--help")
	if !strings.Contains(help.stdout+help.stderr, "on a line of its own, for every transport") {
		t.Errorf("dump --help does not say what raw writes:\n%s%s", help.stdout, help.stderr)
	}
}

// recordStdio records a stdio exchange: the client sends two lines and a
// third cut off by the end of its stream, then the agent answers.
func recordStdio(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdio.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Chunk(0, capture.StreamClient, 1, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"_x/crlf\"}\r\n"))
	w.Chunk(0, capture.StreamClient, 2, []byte(`{"jsonrpc":"2.0","method":"_x/cut`))
	w.EndStream(0, capture.StreamClient, 3)
	w.Chunk(0, capture.StreamAgent, 4, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordHTTPBodies records, through the real HTTP proxy, each of posts as
// a POST body (the first an initialize, answered in its response body,
// the rest answered 202) and then a GET whose SSE stream sends events,
// each event's data split over lines as the server's SSE writer does.
func recordHTTPBodies(t *testing.T, posts, events []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w := createCapture(t, path)
	up := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet:
			rw.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range events {
				fmt.Fprintf(rw, "data: %s\n\n", strings.ReplaceAll(ev, "\n", "\ndata: "))
			}
		case bytes.Contains(body, []byte(`"initialize"`)):
			rw.Header().Set("Content-Type", "application/json")
			rw.Header().Set("Acp-Connection-Id", "c1")
			fmt.Fprint(rw, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`)
		default:
			rw.WriteHeader(http.StatusAccepted)
		}
	}))
	defer up.Close()
	p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	send := func(method, body string) {
		req, _ := http.NewRequest(method, front.URL+"/acp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if !strings.Contains(body, `"initialize"`) {
			req.Header.Set("Acp-Connection-Id", "c1")
		}
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for _, body := range posts {
		send(http.MethodPost, body)
	}
	send(http.MethodGet, "")
	p.Close()
	front.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRawLineIsJSON: every line raw writes for a JSON message, however
// the message was laid out, is the message, compacted.
func TestRawLineIsJSON(t *testing.T) {
	for _, body := range []string{"{}", "{\n}\n", "[\r\n 1,\n 2\n]", "{\"s\":\"a\\nb\"}\n\n"} {
		line := string(rawLine(&capture.Record{Msg: protocol.Msg{Body: []byte(body), HTTP: &wire.Envelope{Stream: wire.StreamPOST}}}))
		var want bytes.Buffer
		json.Compact(&want, []byte(body))
		if line != want.String()+"\n" {
			t.Errorf("rawLine(%q) = %q, want %q", body, line, want.String()+"\n")
		}
	}
}
