package bridge

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// connectRun is connect running against a server, driven line by line
// like an editor would.
type connectRun struct {
	stdin *io.PipeWriter
	lines chan string // stdout, one message per line
	done  chan error
	rec   *netkit.Recorder
	info  *testkit.Buffer
}

func startConnect(t *testing.T, co ConnectOptions) *connectRun {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	r := &connectRun{stdin: stdinW, lines: make(chan string, 1024), done: make(chan error, 1),
		rec: &netkit.Recorder{}, info: &testkit.Buffer{}}
	co.Stdin, co.Stdout, co.Recorder = stdinR, stdoutW, r.rec
	co.Info = func(s string) { r.info.Write([]byte(s + "\n")) }
	go func() { // connect: ends when stdin closes or the server is lost
		err := Connect(context.Background(), co)
		stdoutW.Close()
		r.done <- err
	}()
	go func() { // stdout reader: ends when connect closes stdout
		defer close(r.lines)
		br := bufio.NewReader(stdoutR)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				r.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { stdinW.Close() })
	return r
}

func (r *connectRun) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to connect: %v", err)
	}
}

// until returns the lines up to and including the answer to id.
func (r *connectRun) until(t *testing.T, id int) []string {
	t.Helper()
	want := `"id":` + strconv.Itoa(id) + `,`
	var got []string
	timeout := time.After(netkit.CondWait)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				t.Fatalf("connect's stdout ended before the answer to %d; got %q", id, got)
			}
			got = append(got, line)
			if strings.Contains(line, want) && !strings.Contains(line, `"method"`) {
				return got
			}
		case <-timeout:
			t.Fatalf("no answer to %d within %v; got %q", id, netkit.CondWait, got)
		}
	}
}

// finish closes stdin and waits for connect to end cleanly.
func (r *connectRun) finish(t *testing.T) {
	t.Helper()
	r.stdin.Close()
	for range r.lines {
	}
	if err := <-r.done; err != nil {
		t.Fatalf("connect: %v", err)
	}
}

// TestConnectLoadHistoryFirst loads 50 sessions in a row through one
// connect and one serve: connect opens each session's stream before it
// POSTs the load, so every replayed history reaches stdout before the
// load's answer.
func TestConnectLoadHistoryFirst(t *testing.T) {
	f := startServe(t, netkit.H2C, func(o *ServeOptions) { o.Argv = []string{demoAgent(t)} })
	r := startConnect(t, ConnectOptions{URL: f.url})
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	r.until(t, 0)
	const loads = 50
	for i := 1; i <= loads; i++ {
		sid := "sess_old_" + strconv.Itoa(i)
		r.send(t, loadBody(i, sid, "/w"))
		got := r.until(t, i)
		updates := 0
		for _, l := range got[:len(got)-1] {
			if strings.Contains(l, `"session/update"`) && strings.Contains(l, `"sessionId":"`+sid+`"`) {
				updates++
			}
		}
		if updates != 2 || !strings.Contains(got[len(got)-1], `"result"`) {
			t.Fatalf("load %d of %d: stdout before its answer %q; want the two history updates of %s first", i, loads, got, sid)
		}
	}
	r.finish(t)
}

// TestConnectHTTPVersion checks which HTTP version connect speaks to a
// server that speaks cleartext HTTP/2, one that speaks only HTTP/1.1 and
// one behind TLS, by default and when forced; that it says so; and that
// every recorded envelope names that version.
func TestConnectHTTPVersion(t *testing.T) {
	tests := []struct {
		name   string
		server netkit.Proto
		opts   ConnectOptions
		want   string // the version, and the reason connect gives
		why    string
	}{
		{"h2c server", netkit.H2C, ConnectOptions{}, "HTTP/2.0", "cleartext HTTP/2 with prior knowledge"},
		{"HTTP/1.1-only server", netkit.H1, ConnectOptions{}, "HTTP/1.1", "does not speak cleartext HTTP/2"},
		{"h2c server, --http1", netkit.H2C, ConnectOptions{HTTP1: true}, "HTTP/1.1", "--http1"},
		{"h2c server, --h2c", netkit.H2C, ConnectOptions{H2C: true}, "HTTP/2.0", "--h2c"},
		{"TLS server", netkit.TLS, ConnectOptions{UnsafeInsecure: true}, "HTTP/2.0", "negotiated through TLS"},
		{"TLS server, --http1", netkit.TLS, ConnectOptions{UnsafeInsecure: true, HTTP1: true}, "HTTP/1.1", "--http1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startServe(t, tt.server, nil)
			co := tt.opts
			co.URL = f.url
			r := startConnect(t, co)
			r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
			r.until(t, 0)
			r.send(t, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
			r.until(t, 1)
			r.finish(t)
			if got := "HTTP/" + strconv.Itoa(int(f.proto.Load())); !strings.HasPrefix(tt.want, got) {
				t.Errorf("the server saw %s, want %s", got, tt.want)
			}
			if info := r.info.String(); !strings.Contains(info, "acpscope connect: "+tt.want+" to ") || !strings.Contains(info, tt.why) {
				t.Errorf("connect said %q; want %s and %q", info, tt.want, tt.why)
			}
			frames := r.rec.All()
			if len(frames) < 6 {
				t.Fatalf("%d frames recorded", len(frames))
			}
			for _, fr := range frames {
				if fr.Env.Proto != tt.want {
					t.Errorf("frame %s %s %q recorded with %q, want %s", fr.Env.Method, fr.Env.Stream, fr.Body, fr.Env.Proto, tt.want)
				}
			}
			if first := frames[0]; first.Dir != wire.DirClient || !strings.Contains(first.Body, `"initialize"`) {
				t.Errorf("first frame %+v, want the initialize POST", first)
			}
		})
	}
}

// TestConnectH2CProbeQuiet checks that the cleartext HTTP/2 probe of an
// HTTP/1.1-only server is no ACP request: the endpoint's first request
// is the initialize POST, and serve records nothing of the probe.
func TestConnectH2CProbeQuiet(t *testing.T) {
	rec := &netkit.Recorder{}
	srv, err := NewServer(ServeOptions{Argv: agentArgv("acp"), KeepAlive: -1, Stderr: io.Discard, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	var seen []string
	hs := netkit.StartServer(t, netkit.H1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Proto)
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	r := startConnect(t, ConnectOptions{URL: hs.URL + "/acp"})
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	r.until(t, 0)
	r.finish(t)
	mu.Lock()
	defer mu.Unlock()
	var endpoint []string
	for _, s := range seen {
		if strings.Contains(s, " /acp ") {
			endpoint = append(endpoint, s)
		}
	}
	if len(seen) == len(endpoint) || len(endpoint) == 0 || endpoint[0] != "POST /acp HTTP/1.1" {
		t.Fatalf("the server's handler saw %v; want the probe off the endpoint, then the initialize POST", seen)
	}
	for _, f := range rec.All() {
		if f.Env.Method != "POST" && f.Env.Method != "GET" && f.Env.Method != "DELETE" {
			t.Errorf("serve recorded the probe: %+v", f)
		}
	}
}
