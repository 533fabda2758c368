package bridge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/proxy"
	"github.com/acpscope/acpscope/wire"
)

// demoAgentBinary is testdata/demoagent, the demo agent with a byte tee.
var demoAgentBinary = netkit.Binary{Package: "./testdata/demoagent", Name: "demoagent"}

// demoAgent builds the demo agent once per test binary.
func demoAgent(t testing.TB) string { return demoAgentBinary.Path(t) }

// conversation runs the demo client over connect to url and returns its
// summary and the bytes the client sent and received.
// It also checks that connect recorded each message it carried, once.
func conversation(t *testing.T, co ConnectOptions, opts demo.ClientOptions) (demo.Summary, []byte, []byte) {
	t.Helper()
	toConnect, clientOut := io.Pipe()  // client → connect's stdin
	clientIn, fromConnect := io.Pipe() // connect's stdout → client
	var sent, got testkit.Buffer
	rec := &netkit.Recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		co.Stdin, co.Stdout, co.Recorder = toConnect, fromConnect, rec
		err := Connect(ctx, co)
		fromConnect.Close()
		done <- err
	}()
	sum, err := demo.RunClient(ctx, io.TeeReader(clientIn, &got), writeCloser{io.MultiWriter(&sent, clientOut), clientOut}, opts)
	clientOut.Close()
	if err != nil {
		t.Fatalf("demo client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("connect: %v", err)
	}
	var fromClient, toClient []string
	for _, f := range rec.All() {
		switch {
		case f.Env.Stream == "http" || f.Flags != 0:
		case f.Dir == wire.DirClient:
			fromClient = append(fromClient, f.Body+"\n")
		default:
			toClient = append(toClient, f.Body+"\n")
		}
	}
	if strings.Join(fromClient, "") != string(sent.Bytes()) {
		t.Errorf("connect recorded %d client messages, not the %d bytes the client sent", len(fromClient), len(sent.Bytes()))
	}
	if !reflect.DeepEqual(sortedLines([]byte(strings.Join(toClient, ""))), sortedLines(got.Bytes())) {
		t.Errorf("connect recorded %d agent messages, not what the client received", len(toClient))
	}
	return sum, sent.Bytes(), got.Bytes()
}

type writeCloser struct {
	io.Writer
	c io.Closer
}

func (w writeCloser) Close() error { return w.c.Close() }

// agentBytes returns what the one agent process read and wrote.
func agentBytes(t *testing.T, dir string) (in, out []byte) {
	t.Helper()
	ins, _ := filepath.Glob(filepath.Join(dir, "in.*"))
	outs, _ := filepath.Glob(filepath.Join(dir, "out.*"))
	if len(ins) != 1 || len(outs) != 1 {
		t.Fatalf("want one agent process, found tees %v %v", ins, outs)
	}
	in, _ = os.ReadFile(ins[0])
	out, _ = os.ReadFile(outs[0])
	return in, out
}

func sortedLines(b []byte) []string {
	lines := strings.SplitAfter(string(b), "\n")
	sort.Strings(lines)
	return lines
}

// TestConnectServe carries the full demo conversation (permission,
// fs and terminal requests, cancel, load) through connect ⇄ serve over
// Streamable HTTP (h1, h2c) and WebSocket, and byte-compares what the
// client sent with what the agent read and what the agent wrote with
// what the client received, in order: over HTTP the event ids serve adds
// (HeaderEventOrder) let connect restore the agent's order across the
// connection and session streams.
func TestConnectServe(t *testing.T) {
	agent := demoAgent(t)
	opts := demo.ClientOptions{Cancel: true, Load: true, Sessions: 2, Grace: 5 * time.Second}
	tests := []struct {
		name   string
		proto  netkit.Proto
		scheme string
	}{
		{"http h1", netkit.H1, "http"},
		{"http h2c", netkit.H2C, "http"},
		{"https h2", netkit.TLS, "https"},
		{"websocket", netkit.H1, "ws"},
		{"websocket tls", netkit.TLS, "wss"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tee := t.TempDir()
			f := startServe(t, tt.proto, func(o *ServeOptions) {
				o.Argv = []string{agent}
				o.Agent.Env = append(os.Environ(), "ACPSCOPE_TEE_DIR="+tee)
			})
			url := tt.scheme + f.url[strings.Index(f.url, ":"):]
			co := ConnectOptions{URL: url, H2C: tt.proto == netkit.H2C, UnsafeInsecure: tt.proto == netkit.TLS}
			sum, sent, got := conversation(t, co, opts)
			if len(sum.Sessions) != 2 || len(sum.Sessions[0].Turns) == 0 {
				t.Fatalf("conversation incomplete: %+v", sum)
			}
			waitFor(t, func() bool { return f.srv.Conns() == 0 })
			agentIn, agentOut := agentBytes(t, tee)
			if !bytes.Equal(sent, agentIn) {
				t.Errorf("agent read %d bytes, client sent %d:\n%s", len(agentIn), len(sent), firstDiff(sent, agentIn))
			}
			if !bytes.Equal(got, agentOut) {
				t.Errorf("client received %d bytes, agent wrote %d:\n%s", len(got), len(agentOut), firstDiff(agentOut, got))
			}
			if !reflect.DeepEqual(sortedLines(got), sortedLines(agentOut)) {
				t.Errorf("client received other lines than the agent wrote")
			}
			if got := int(f.proto.Load()); tt.scheme[0] == 'h' && got != netkit.WantProto(tt.proto) {
				t.Errorf("connect spoke HTTP/%d, want %d", got, netkit.WantProto(tt.proto))
			}
		})
	}
}

// TestConnectServeDirect checks that the bridged conversation is the one
// the demo agent holds over plain pipes.
func TestConnectServeDirect(t *testing.T) {
	opts := demo.ClientOptions{Cancel: true, Load: true}
	cmd := exec.Command(demoAgent(t))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	direct, err := demo.RunClient(context.Background(), stdout, stdin, opts)
	stdin.Close()
	cmd.Wait()
	if err != nil {
		t.Fatal(err)
	}
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.Argv = []string{demoAgent(t)} })
	bridged, _, _ := conversation(t, ConnectOptions{URL: f.url}, opts)
	if !reflect.DeepEqual(direct, bridged) {
		t.Fatalf("bridged conversation differs:\n direct %+v\nbridged %+v", direct, bridged)
	}
}

// TestConnectLost checks that connect ends with ErrConnectionLost when
// the server goes away, and fails clearly when it refuses the token.
func TestConnectLost(t *testing.T) {
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.AuthToken = "tok" })
	said, err := connectOnce(f.url, "bad", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if !errors.Is(err, ErrCannotConnect) || !strings.Contains(err.Error(), "--auth-token") {
		t.Fatalf("HTTP with a bad token: %v", err)
	}
	if !strings.Contains(said, `{"jsonrpc":"2.0","id":0,"error":`) || !strings.Contains(said, "401 Unauthorized") {
		t.Fatalf("the editor's initialize was not answered with the refusal: %q", said)
	}
	ws := "ws" + strings.TrimPrefix(f.url, "http")
	if _, err := connectOnce(ws, "bad", ""); err == nil || !strings.Contains(err.Error(), "--auth-token") {
		t.Fatalf("WebSocket with a bad token: %v", err)
	}
	stdinR, stdinW := io.Pipe()
	done := make(chan error, 1)
	var out testkit.Buffer
	go func() {
		done <- Connect(context.Background(), ConnectOptions{URL: f.url, AuthToken: "tok", Stdin: stdinR, Stdout: &out})
	}()
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n")
	waitFor(t, func() bool { return bytes.Contains(out.Bytes(), []byte(`"id":0`)) })
	f.srv.Close() // the server ends every connection
	select {
	case err := <-done:
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("got %v, want ErrConnectionLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("connect did not notice the lost server")
	}
}

// connectOnce runs connect with one line on stdin and returns its output.
func connectOnce(url, token, line string) (string, error) {
	var out testkit.Buffer
	in := ""
	if line != "" {
		in = line + "\n"
	}
	err := Connect(context.Background(), ConnectOptions{URL: url, AuthToken: token, Stdin: strings.NewReader(in), Stdout: &out})
	return string(out.Bytes()), err
}

func firstDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-80)
	return "at byte " + strconv.Itoa(i) + ":\nwant …" + string(want[lo:min(len(want), i+80)]) + "\n got …" + string(got[lo:min(len(got), i+80)])
}

// TestConnectGoose runs connect against goose's older dialect: SSE
// answered on each POST, Acp-Session-Id as the connection id.
func TestConnectGoose(t *testing.T) {
	up := netkit.NewFakeUpstream()
	srv := netkit.StartServer(t, netkit.H1, up)
	stdinR, stdinW := io.Pipe()
	var out testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Connect(context.Background(), ConnectOptions{URL: srv.URL + "/goose", Stdin: stdinR, Stdout: &out})
	}()
	// The two data lines of each reply become one stdout line. Like an
	// editor, the test waits for each reply before the next request.
	first := `{"jsonrpc":"2.0","method":"notice"}` + "\n" + `{"jsonrpc":"2.0", "id":1,"result":{}}` + "\n"
	want := first + `{"jsonrpc":"2.0","method":"notice"}` + "\n" + `{"jsonrpc":"2.0", "id":2,"result":{}}` + "\n"
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
	waitFor(t, func() bool { return len(out.Bytes()) >= len(first) })
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`+"\n")
	waitFor(t, func() bool { return len(out.Bytes()) >= len(want) })
	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := string(out.Bytes()); got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
}

// recordingProxy starts the fake upstream and the recording proxy in
// front of it, and returns the proxy's base URL and what it recorded.
func recordingProxy(t *testing.T) (string, *netkit.Recorder) {
	t.Helper()
	up := netkit.StartServer(t, netkit.H1, netkit.NewFakeUpstream())
	rec := &netkit.Recorder{}
	p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return netkit.StartServer(t, netkit.H1, p).URL, rec
}

// TestConnectThroughProxy runs connect against an RFD server through the
// recording proxy: the server insists on its affinity cookie, answers
// session/new on the connection stream and refuses session streams.
func TestConnectThroughProxy(t *testing.T) {
	base, rec := recordingProxy(t)
	stdinR, stdinW := io.Pipe()
	var out testkit.Buffer
	var warnings testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Connect(context.Background(), ConnectOptions{URL: base + "/acp", Stdin: stdinR, Stdout: &out,
			Warn: func(s string) { warnings.Write([]byte(s + "\n")) }})
	}()
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`+"\n")
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0", "id":2,"result":{"sessionId":"s1"}}` + "\n"
	waitFor(t, func() bool { return len(out.Bytes()) >= len(want) })
	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := string(out.Bytes()); got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	if !strings.Contains(warnings.String(), "session s1 stream refused: 404") {
		t.Errorf("warnings: %q", warnings.String())
	}
	netkit.ContainsAll(t, rec, `1 client POST post 0 {"jsonrpc":"2.0","id":2,"method":"session/new"`, `1 agent POST http 202 `, `1 agent DELETE http 202 `)
}

// TestConnectProxyNoGoroutineLeak runs connect through the proxy over
// Streamable HTTP and WebSocket, closes everything, and checks that the
// goroutines are gone.
func TestConnectProxyNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		srv, err := NewServer(ServeOptions{Argv: agentArgv("acp"), Agent: agent.Options{Grace: 200 * time.Millisecond}, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		up := httptest.NewServer(srv)
		p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: &netkit.Recorder{}})
		if err != nil {
			t.Fatal(err)
		}
		front := httptest.NewServer(p)
		for _, u := range []string{front.URL + "/acp", "ws" + strings.TrimPrefix(front.URL, "http") + "/acp"} {
			stdinR, stdinW := io.Pipe()
			var out testkit.Buffer
			done := make(chan error, 1)
			go func() { done <- Connect(context.Background(), ConnectOptions{URL: u, Stdin: stdinR, Stdout: &out}) }()
			io.WriteString(stdinW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n")
			waitFor(t, func() bool { return bytes.Contains(out.Bytes(), []byte(`"protocolVersion":1`)) })
			stdinW.Close()
			if err := <-done; err != nil {
				t.Fatalf("connect %s: %v", u, err)
			}
		}
		waitFor(t, func() bool { return srv.Conns() == 0 })
		p.Close()
		front.CloseClientConnections()
		front.Close()
		srv.Close()
		up.CloseClientConnections()
		up.Close()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestConnectDrainsAtEOF checks that connect still delivers the answers
// to requests sent just before the editor closed stdin, over both
// transports.
func TestConnectDrainsAtEOF(t *testing.T) {
	f := startServe(t, netkit.H1, nil)
	for _, u := range []string{f.url, "ws" + strings.TrimPrefix(f.url, "http")} {
		out, err := connectOnce(u, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
		if err != nil || !strings.Contains(out, `"id":0,"result"`) {
			t.Fatalf("%s: got %q, %v", u, out, err)
		}
	}
}
