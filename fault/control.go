package fault

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
)

// The control protocol, spoken on a capture's control socket
// (capture.ListenControl): JSON objects, one a line, both ways.
//
// A client sends requests:
//
//	{"op":"send","to":"agent"|"client","conn":0,"message":"<exact bytes>"}
//	{"op":"hold","filter":"method:session/request_permission"}   ("" stops holding)
//	{"op":"release","id":7,"verdict":"forward"|"edit"|"drop","message":"…"}
//	{"op":"release-all"}
//	{"op":"list"}
//
// The server answers each with {"event":"reply","ok":true,…} or
// {"event":"reply","error":"…"}, in order; it greets with
// {"event":"hello","intercept":true,"holdTimeout":"1m"} and tells the
// client that holds of what it held and released ("held", "released").
// Messages travel as JSON strings holding their exact bytes.

// maxControlLine bounds one request: a message sent by hand may be big,
// but not without end.
const maxControlLine = 64 << 20

// clientQueue is how many events a client may fall behind by before it
// is cut off: a stuck client must not stall the traffic it watches.
const clientQueue = 1024

// Request is one control request.
type Request struct {
	Op      string  `json:"op"`
	To      string  `json:"to,omitempty"`
	Conn    uint32  `json:"conn,omitempty"`
	Message *string `json:"message,omitempty"`
	Filter  *string `json:"filter,omitempty"`
	ID      uint64  `json:"id,omitempty"`
	Verdict string  `json:"verdict,omitempty"`
}

// event is what the server writes; Event is its type.
type event struct {
	Event       string     `json:"event"`
	OK          bool       `json:"ok,omitempty"`
	Error       string     `json:"error,omitempty"`
	ID          uint64     `json:"id,omitempty"`
	How         string     `json:"how,omitempty"`
	Note        string     `json:"note,omitempty"`
	Held        *HeldView  `json:"held,omitempty"`
	List        []HeldView `json:"list,omitempty"`
	Intercept   bool       `json:"intercept,omitempty"`
	HoldTimeout string     `json:"holdTimeout,omitempty"`
}

// HeldView is a held message as a control client sees it.
type HeldView struct {
	ID      uint64 `json:"id"`
	Conn    uint32 `json:"conn"`
	Dir     string `json:"dir"`
	Arrived int64  `json:"arrived"`
	Message string `json:"message"`
}

func (m *held) view() *HeldView {
	return &HeldView{ID: m.id, Conn: m.conn, Dir: m.dir.String(), Arrived: m.arrived, Message: string(m.msg)}
}

// Control serves an engine on a control socket.
type Control struct {
	e  *Engine
	ln net.Listener
	wg sync.WaitGroup // the accept loop and each client's reader and writer

	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool
}

// Serve starts serving e's control protocol on ln, which it owns from
// now on. Only connections from this user are accepted (checkPeer).
func Serve(e *Engine, ln net.Listener) *Control {
	c := &Control{e: e, ln: ln, clients: map[*client]struct{}{}}
	c.wg.Add(1)
	go c.accept() // the accept loop: ends when Close closes ln
	return c
}

// Close stops accepting, cuts every client off (what they held is
// released unchanged) and waits for the control goroutines.
func (c *Control) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	clients := make([]*client, 0, len(c.clients))
	for cl := range c.clients {
		clients = append(clients, cl)
	}
	c.mu.Unlock()
	c.ln.Close()
	for _, cl := range clients {
		cl.close()
	}
	c.wg.Wait()
}

func (c *Control) accept() {
	defer c.wg.Done()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		if err := checkPeer(nc); err != nil {
			c.e.opts.Warn("control socket: refused a connection: " + err.Error())
			nc.Close()
			continue
		}
		cl := &client{nc: nc, out: make(chan []byte, clientQueue), gone: make(chan struct{})}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			nc.Close()
			return
		}
		c.clients[cl] = struct{}{}
		c.mu.Unlock()
		c.wg.Add(2)
		go cl.writeLoop(&c.wg) // the client's writer: ends when gone closes
		go c.serve(cl)         // the client's reader: ends when it hangs up
	}
}

// serve reads a client's requests until it hangs up.
func (c *Control) serve(cl *client) {
	defer c.wg.Done()
	defer func() {
		cl.close()
		c.e.holds.ownerGone(cl)
		c.mu.Lock()
		delete(c.clients, cl)
		c.mu.Unlock()
	}()
	cl.notify(event{Event: "hello", Intercept: c.e.opts.AllowIntercept, HoldTimeout: human.Duration(c.e.opts.HoldTimeout)})
	sc := bufio.NewScanner(cl.nc)
	sc.Buffer(make([]byte, 64<<10), maxControlLine)
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			cl.notify(event{Event: "reply", Error: "not a control request: " + err.Error()})
			continue
		}
		cl.notify(c.handle(cl, &req))
	}
}

// handle carries out one request and returns its reply.
func (c *Control) handle(cl *client, req *Request) event {
	reply := event{Event: "reply", OK: true}
	var err error
	switch req.Op {
	case "send":
		reply.ID, err = c.send(req)
	case "hold":
		err = c.setHold(cl, req)
	case "release":
		err = c.release(req)
	case "release-all":
		reply.ID = uint64(c.e.holds.releaseAll("released by hand"))
	case "list":
		for _, m := range c.e.holds.list() {
			reply.List = append(reply.List, *m.view())
		}
	default:
		err = fmt.Errorf("unknown op %q: send, hold, release, release-all or list", req.Op)
	}
	if err != nil {
		return event{Event: "reply", Error: err.Error()}
	}
	return reply
}

func (c *Control) send(req *Request) (uint64, error) {
	dir, ok := ParseTo(req.To)
	if !ok {
		return 0, fmt.Errorf("send: to %q: write agent or client", req.To)
	}
	if req.Message == nil {
		return 0, errors.New("send: no message")
	}
	return c.e.Send(req.Conn, dir, []byte(*req.Message))
}

func (c *Control) setHold(cl *client, req *Request) error {
	if !c.e.opts.AllowIntercept {
		return errors.New("this proxy does not allow holding messages: start it with --allow-intercept")
	}
	if req.Filter == nil || *req.Filter == "" {
		c.e.holds.setFilter(nil, nil)
		return nil
	}
	f, err := capture.ParseFilter(*req.Filter)
	if err != nil {
		return fmt.Errorf("hold: %w", err)
	}
	c.e.holds.setFilter(cl, f)
	return nil
}

func (c *Control) release(req *Request) error {
	v := verdict{action: req.Verdict, note: "released by hand"}
	switch req.Verdict {
	case VerdictForward, VerdictDrop:
	case VerdictEdit:
		if req.Message == nil {
			return errors.New("release: an edit needs the new message")
		}
		v.msg = []byte(*req.Message)
		if len(v.msg) == 0 {
			return errors.New("release: the edited message is empty")
		}
	default:
		return fmt.Errorf("release: verdict %q: write forward, edit or drop", req.Verdict)
	}
	return c.e.holds.release(req.ID, v)
}

// client is one control connection.
type client struct {
	nc   net.Conn
	out  chan []byte
	once sync.Once
	gone chan struct{}
}

// notify queues ev for the client without blocking; a client too far
// behind is cut off. A nil client (no owner) ignores it.
func (cl *client) notify(ev event) {
	if cl == nil {
		return
	}
	b, _ := json.Marshal(ev)
	select {
	case <-cl.gone:
	case cl.out <- append(b, '\n'):
	default:
		cl.close()
	}
}

func (cl *client) close() {
	cl.once.Do(func() {
		close(cl.gone)
		cl.nc.Close()
	})
}

func (cl *client) writeLoop(wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case b := <-cl.out:
			if _, err := cl.nc.Write(b); err != nil {
				cl.close()
				return
			}
		case <-cl.gone:
			return
		}
	}
}
