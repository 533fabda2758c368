package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/bridge"
	"github.com/acpscope/acpscope/proxy"
	flag "github.com/spf13/pflag"
)

const (
	mib = 1 << 20
	gib = 1 << 30
	// memBase is what a serve or proxy process may hold besides messages:
	// the runtime, buffers, the capture's queue and bbolt.
	memBase = 64 * mib
)

// buildAcpscope builds acpscope without the race detector: the memory a
// server process takes is measured, and a race-built one takes several
// times more for the same work, which would say nothing about ours.
func buildAcpscope(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "acpscope")
	build := exec.Command("go", "build", "-o", bin, "github.com/acpscope/acpscope")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building acpscope: %v\n%s", err, out)
	}
	return bin
}

// startListening runs bin with args and returns the process and the URL
// it announces on stderr.
func startListening(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	u, _ := startAnnouncing(t, cmd)
	return cmd, u
}

// memOf reads a Vm line (VmHWM, VmRSS) of a process, in bytes.
func memOf(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// resetPeak makes VmHWM start again from the current RSS (proc(5),
// clear_refs "5"), so each case measures its own peak.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS of %d: %v", pid, err)
	}
}

// blob is a JSON-RPC notification of n bytes, produced as it is read.
func blob(n int64) io.Reader {
	head, tail := `{"jsonrpc":"2.0","method":"x/blob","params":{"data":"`, `"}}`
	return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatA{}, n-int64(len(head)+len(tail))), strings.NewReader(tail))
}

type repeatA struct{}

func (repeatA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestCmdBodyMemory POSTs huge bodies to a real serve and a real proxy
// and reads each process's peak RSS: a body over the default limit is
// refused with 413 at a tiny cost (unread when its Content-Length says
// so), an accepted body costs at most 64 MiB + twice its size (it and
// the capture's commit of it), and the memory goes back afterwards.
func TestCmdBodyMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Fatalf("this test reads peak RSS from /proc: %v", err)
	}
	bin := buildAcpscope(t)
	dir := t.TempDir()
	agent := `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; exec cat >/dev/null`
	serve, serveURL := startListening(t, bin, "serve", "--listen", "127.0.0.1:0",
		"--capture", filepath.Join(dir, "serve.acpscope"), "--", "/bin/sh", "-c", agent)
	proxy, proxyURL := startListening(t, bin, "proxy", "--listen", "127.0.0.1:0",
		"--upstream", serveURL, "--capture", filepath.Join(dir, "proxy.acpscope"))
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 60 * time.Second}}
	const limit = 256 * mib // the default --max-message-size
	tests := []struct {
		name     string
		size     int64
		sized    bool
		want     int
		maxPeak  int64
		expect   bool // send Expect: 100-continue, as curl does for big uploads
		wantText string
	}{
		{"1 GiB with Content-Length", gib, true, 413, memBase, true, "the message (1073741824 bytes) is over the 256MiB limit; raise it with --max-message-size"},
		{"1 GiB chunked", gib, false, 413, memBase + 2*limit, false, "the message is over the 256MiB limit"},
		{"200 MiB with Content-Length", 200 * mib, true, 202, memBase + 2*200*mib, false, ""},
		{"200 MiB chunked", 200 * mib, false, 202, memBase + 2*200*mib, false, ""},
	}
	for _, target := range []struct {
		name string
		pid  int
		url  string
	}{{"serve", serve.Process.Pid, serveURL}, {"proxy", proxy.Process.Pid, proxyURL}} {
		conn := initializeAt(t, client, target.url)
		for _, tt := range tests {
			t.Run(target.name+" "+tt.name, func(t *testing.T) {
				resetPeak(t, target.pid)
				req, _ := http.NewRequest(http.MethodPost, target.url, blob(tt.size))
				if tt.sized {
					req.ContentLength = tt.size
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Acp-Connection-Id", conn)
				if tt.expect {
					req.Header.Set("Expect", "100-continue")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("POST: %v", err)
				}
				text, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.want || !strings.Contains(string(text), tt.wantText) {
					t.Fatalf("%d %q, want %d %q", resp.StatusCode, text, tt.want, tt.wantText)
				}
				peak := memOf(t, target.pid, "VmHWM")
				t.Logf("%s peak RSS %d MiB (bound %d MiB)", target.name, peak/mib, tt.maxPeak/mib)
				if peak > tt.maxPeak {
					t.Errorf("%s peaked at %d MiB of RSS, over the %d MiB bound", target.name, peak/mib, tt.maxPeak/mib)
				}
				// The memory goes back once the message is handled and
				// committed.
				deadline := time.Now().Add(90 * time.Second)
				for rss := memOf(t, target.pid, "VmRSS"); rss > memBase; rss = memOf(t, target.pid, "VmRSS") {
					if time.Now().After(deadline) {
						t.Fatalf("%s still holds %d MiB of RSS after 90s", target.name, rss/mib)
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	}
}

// initializeAt opens a connection and returns its id.
func initializeAt(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Acp-Connection-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %v", resp.StatusCode, resp.Header)
	}
	return id
}

// TestBoundFlags: sizes read as gc reads them, 0 turns a cap off, and a
// size that is no size, or none at all, is a usage error naming the flag.
func TestBoundFlags(t *testing.T) {
	tests := []struct {
		args     []string
		wantSize int64
		wantCap  int
		wantIdle time.Duration
		wantErr  string
	}{
		{nil, 256 * mib, 64, 5 * time.Minute, ""},
		{[]string{"--max-message-size", "64MiB", "--max-connections", "8", "--idle-timeout", "2m"}, 64 * mib, 8, 2 * time.Minute, ""},
		{[]string{"--max-message-size=1GiB", "--max-connections=0", "--idle-timeout=0"}, gib, -1, -1, ""},
		{[]string{"--max-message-size", "lots"}, 0, 0, 0, `--max-message-size: "lots" is not a size`},
		{[]string{"--max-message-size", "0"}, 0, 0, 0, "--max-message-size must be more than 0"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			serveBoundFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			var opts bridge.ServeOptions
			err := serveBounds(fs, &opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || opts.MaxMessageSize != tt.wantSize || opts.MaxConns != tt.wantCap || opts.IdleTimeout != tt.wantIdle {
				t.Fatalf("%v: size %d, cap %d, idle %v; want %d, %d, %v", err, opts.MaxMessageSize, opts.MaxConns, opts.IdleTimeout, tt.wantSize, tt.wantCap, tt.wantIdle)
			}
		})
	}
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	proxyBoundFlags(fs)
	fs.Parse([]string{"--max-in-flight", "0", "--max-message-size", "10MB"})
	var opts proxy.HTTPProxyOptions
	if err := proxyBounds(fs, &opts); err != nil || opts.MaxInFlight != -1 || opts.MaxMessageSize != 10_000_000 {
		t.Fatalf("proxy bounds: %v %+v", err, opts)
	}
}
