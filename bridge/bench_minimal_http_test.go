package bridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/acpscope/acpscope/internal/acphttp"
)

// The least a Streamable HTTP bridge does, for one connection, as the
// baselines of BenchmarkHopsAgainstMinimal: enough of the RFD for
// acpscope's connect and serve to talk to them, nothing recorded.

// minimalHTTPServe answers initialize with the agent's reply and a
// connection id, every other POST with 202 after writing it to that
// connection's agent, and a GET with an SSE stream of the agent's
// further lines.
func minimalHTTPServe(b *testing.B) http.Handler {
	type conn struct {
		in    io.Writer
		lines chan []byte
	}
	var (
		mu    sync.Mutex
		conns = map[string]*conn{}
	)
	lookup := func(r *http.Request) *conn {
		mu.Lock()
		defer mu.Unlock()
		return conns[r.Header.Get(acphttp.HeaderConnectionID)]
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.Header.Get(acphttp.HeaderConnectionID) == "":
			body, _ := io.ReadAll(r.Body)
			cmd := exec.Command(testAgent, "acp")
			stdin, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Error(err)
				return
			}
			b.Cleanup(func() { stdin.Close(); cmd.Wait() })
			stdin.Write(append(body, '\n'))
			rd := bufio.NewReaderSize(out, 64<<10)
			reply, err := rd.ReadBytes('\n')
			if err != nil {
				b.Error(err)
				return
			}
			c := &conn{in: stdin, lines: make(chan []byte, 64)}
			go func() {
				defer close(c.lines)
				for {
					l, err := rd.ReadBytes('\n')
					if err != nil {
						return
					}
					c.lines <- l[:len(l)-1]
				}
			}()
			mu.Lock()
			id := fmt.Sprintf("c%d", len(conns)+1)
			conns[id] = c
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(acphttp.HeaderConnectionID, id)
			w.Write(reply[:len(reply)-1])
		case r.Method == http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			lookup(r).in.Write(append(body, '\n'))
			w.WriteHeader(http.StatusAccepted)
		case r.Method == http.MethodGet:
			c := lookup(r)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			rc.Flush()
			for {
				select {
				case l, ok := <-c.lines:
					if !ok {
						return
					}
					w.Write(append(append([]byte("data: "), l...), "\n\n"...))
					rc.Flush()
				case <-r.Context().Done():
					return
				}
			}
		default: // DELETE
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// minimalHTTPConnect is the least a stdio↔Streamable HTTP client does:
// the first line is POSTed and its JSON answer written back, then a GET
// stream's events are written back as lines while every further line is
// POSTed.
func minimalHTTPConnect(b *testing.B, url string) *roundTripper {
	c := &http.Client{}
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	post := func(line []byte, connID string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(line))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if connID != "" {
			req.Header.Set(acphttp.HeaderConnectionID, connID)
		}
		resp, err := c.Do(req)
		if err != nil {
			b.Error(err)
			return nil
		}
		return resp
	}
	go func() {
		defer outW.Close()
		in := bufio.NewReaderSize(stdinR, 64<<10)
		first, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		resp := post(first[:len(first)-1], "")
		if resp == nil {
			return
		}
		connID := resp.Header.Get(acphttp.HeaderConnectionID)
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		outW.Write(append(reply, '\n'))
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(acphttp.HeaderConnectionID, connID)
		stream, err := c.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		defer stream.Body.Close()
		go func() {
			events := bufio.NewReaderSize(stream.Body, 64<<10)
			for {
				l, err := events.ReadBytes('\n')
				if err != nil {
					return
				}
				if data, ok := strings.CutPrefix(string(l), "data: "); ok {
					outW.Write([]byte(data))
				}
			}
		}()
		for {
			l, err := in.ReadBytes('\n')
			if err != nil {
				return
			}
			if resp := post(l[:len(l)-1], connID); resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	b.Cleanup(func() { stdinW.Close() })
	return &roundTripper{in: stdinW, out: bufio.NewReaderSize(outR, 64<<10)}
}
