package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// conductor routes messages between the client (its own stdio), its proxy
// components and the agent, each a subprocess on stdio. Component 0 is
// the client, the last the agent, those between the proxies in order.
//
// # Concurrency
//
// One reader goroutine per component ("component reader") reads its
// stdout and routes each message; they share pending under mu and write
// through lineWriters, which lock. They end when their component's output
// ends; runChain waits for them after closing every component's stdin.
type conductor struct {
	comps  []*component
	single bool
	trace  *tracer

	mu      sync.Mutex
	next    int64
	pending map[pendingKey]route
}

type component struct {
	name  string
	out   *lineWriter // what the component reads
	stdin io.Closer
	cmd   *exec.Cmd
}

// pendingKey names a request the conductor sent: to which component,
// with which of its own ids.
type pendingKey struct {
	target int
	id     string
}

// route is where the answer to a request goes back to.
type route struct {
	origin int
	id     json.RawMessage
	// acp: the request is a proxy's forwarded initialize; the conductor
	// advertises MCP-over-ACP to proxies whatever its successor says
	// (RFD §MCP-over-ACP support).
	acp bool
}

func runChain(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("chain", flag.ContinueOnError)
	tracePath := fs.String("trace", "", "write the conductor's trace to this file")
	single := fs.Bool("single", false, "wrap in _proxy/successor rather than …/request and …/notification")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cmds [][]string
	for _, a := range fs.Args() {
		if argv := strings.Fields(a); len(argv) > 0 {
			cmds = append(cmds, argv)
		}
	}
	if len(cmds) == 0 {
		return errors.New(`chain: no components: give "PROXY ARGS…" … "AGENT ARGS…", one argument each`)
	}
	c := &conductor{single: *single, pending: map[pendingKey]route{}}
	if *tracePath != "" {
		t, err := newTracer(*tracePath)
		if err != nil {
			return err
		}
		defer t.close()
		c.trace = t
	}
	c.comps = append(c.comps, &component{name: "Client", out: &lineWriter{w: stdout}})
	var readers sync.WaitGroup
	for i, argv := range cmds {
		name := "Proxy(" + strconv.Itoa(i) + ")"
		if i == len(cmds)-1 {
			name = "Agent"
		}
		comp, out, err := start(name, argv)
		if err != nil {
			c.stop()
			return err
		}
		c.comps = append(c.comps, comp)
		idx := len(c.comps) - 1
		readers.Add(1)
		go func() { // component reader
			defer readers.Done()
			readMessages(out, func(m message) { c.handle(idx, m) })
		}()
	}
	readMessages(stdin, func(m message) { c.handle(0, m) })
	c.stop()
	readers.Wait()
	return nil
}

func start(name string, argv []string) (*component, io.Reader, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = time.Minute
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s (%s): %w", name, argv[0], err)
	}
	return &component{name: name, out: &lineWriter{w: in}, stdin: in, cmd: cmd}, out, nil
}

// stop closes every component's stdin and waits for it to exit.
func (c *conductor) stop() {
	for _, comp := range c.comps[1:] {
		comp.stdin.Close()
	}
	for _, comp := range c.comps[1:] {
		if err := comp.cmd.Wait(); err != nil {
			fmt.Fprintf(os.Stderr, "testconductor: %s: %v\n", comp.name, err)
		}
	}
}

func (c *conductor) isProxy(i int) bool { return i > 0 && i < len(c.comps)-1 }

// handle routes one message a component sent.
func (c *conductor) handle(from int, m message) {
	if m.Method == "" {
		c.answer(from, m)
		return
	}
	switch inner, wrapped := unwrap(m); {
	case from == 0:
		c.deliver(from, 1, m)
	case c.isProxy(from) && wrapped:
		c.deliver(from, from+1, inner) // to the proxy's successor
	default:
		c.deliver(from, from-1, m) // to the predecessor, from its successor
	}
}

// deliver sends m from component from to component to, with an id of
// the conductor's own for a request.
func (c *conductor) deliver(from, to int, m message) {
	if m.Method == "initialize" && c.isProxy(to) {
		m.Method = "_proxy/initialize" // the component learns it has a successor
	}
	out := m
	if m.isRequest() {
		c.mu.Lock()
		c.next++
		out.ID = json.RawMessage(strconv.FormatInt(c.next, 10))
		c.pending[pendingKey{to, string(out.ID)}] = route{origin: from, id: m.ID, acp: c.isProxy(from) && m.Method == "initialize"}
		c.mu.Unlock()
	}
	c.trace.message(c.comps[from].name, c.comps[to].name, out)
	if to < from && c.isProxy(to) {
		out = wrap(out, c.single) // a proxy hears from its successor in a wrapper
	}
	if err := c.comps[to].out.send(out); err != nil {
		fmt.Fprintf(os.Stderr, "testconductor: to %s: %v\n", c.comps[to].name, err)
	}
}

// answer sends a response back to whoever made the request.
func (c *conductor) answer(from int, m message) {
	c.mu.Lock()
	r, ok := c.pending[pendingKey{from, string(m.ID)}]
	delete(c.pending, pendingKey{from, string(m.ID)})
	c.mu.Unlock()
	if !ok {
		return
	}
	c.trace.response(c.comps[from].name, c.comps[r.origin].name, m)
	out := message{ID: r.id, Result: m.Result, Error: m.Error}
	if r.acp && m.Result != nil {
		out.Result = withACP(m.Result)
	}
	if err := c.comps[r.origin].out.send(out); err != nil {
		fmt.Fprintf(os.Stderr, "testconductor: to %s: %v\n", c.comps[r.origin].name, err)
	}
}
