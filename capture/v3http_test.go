package capture

import (
	"reflect"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// v3HTTPFrames is the traffic in testdata/v3-http.acpscope.gz, a capture
// written by format version 3 before envelopes recorded the HTTP version:
// an initialize POST and its reply, a connection stream opening and one
// event on it, and a 202.
var v3HTTPFrames = []struct {
	dir  wire.Dir
	body string
	env  wire.Envelope
}{
	{wire.DirClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
		wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST, Headers: map[string]string{"content-type": "application/json"}}},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`,
		wire.Envelope{Method: "POST", Path: "/acp", Status: 200, Stream: wire.StreamPOSTReply, ConnectionID: "c1"}},
	{wire.DirAgent, ``,
		wire.Envelope{Method: "GET", Path: "/acp", Status: 200, Stream: wire.StreamHTTPControl, ConnectionID: "c1"}},
	{wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST, ConnectionID: "c1"}},
	{wire.DirAgent, ``,
		wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl, ConnectionID: "c1"}},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
		wire.Envelope{Method: "GET", Path: "/acp", Status: 200, Stream: wire.StreamConnection, ConnectionID: "c1", EventID: "1"}},
}

// TestReadsEnvelopesWithoutProto: envelopes of captures written before
// the HTTP version was recorded read back whole, with Proto empty, and a
// capture written now keeps it.
func TestReadsEnvelopesWithoutProto(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	now := time.Now().UnixNano()
	for i, f := range v3HTTPFrames {
		env := f.env
		env.Proto = "HTTP/2.0"
		w.Frame(1, f.dir, now+int64(i), []byte(f.body), 0, &env)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for path, proto := range map[string]string{gunzipTestdata(t, "v3-http.acpscope.gz"): "", w.Path(): "HTTP/2.0"} {
		recs := readAll(t, openTest(t, path))
		if len(recs) != len(v3HTTPFrames) {
			t.Fatalf("%s: %d records, want %d", path, len(recs), len(v3HTTPFrames))
		}
		for i, rec := range recs {
			want := v3HTTPFrames[i].env
			want.Proto = proto
			if rec.HTTP == nil || !reflect.DeepEqual(*rec.HTTP, want) || string(rec.Body) != v3HTTPFrames[i].body {
				t.Errorf("%s #%d: envelope %+v body %q; want %+v %q", path, rec.Seq, rec.HTTP, rec.Body, want, v3HTTPFrames[i].body)
			}
		}
	}
}
