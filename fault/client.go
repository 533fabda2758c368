package fault

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// Client is the other end of a control socket: `acpscope send` and the
// inspector's intercept mode. Its requests are answered in order; what
// the proxy holds and releases arrives on Events.
type Client struct {
	nc      net.Conn
	hello   Event
	replies chan Event
	events  chan Event
	mu      sync.Mutex // one request at a time
	done    chan struct{}
}

// Event is what the proxy tells a control client: "held" (Held set),
// "released" (ID, How, Note), or a reply.
type Event struct {
	Event       string     `json:"event"`
	OK          bool       `json:"ok"`
	Error       string     `json:"error"`
	ID          uint64     `json:"id"`
	How         string     `json:"how"`
	Note        string     `json:"note"`
	Held        *HeldView  `json:"held"`
	List        []HeldView `json:"list"`
	Intercept   bool       `json:"intercept"`
	HoldTimeout string     `json:"holdTimeout"`
}

// Dial connects to the control socket of the live capture at path.
func Dial(path string, timeout time.Duration) (*Client, error) {
	nc, err := capture.DialControl(path, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoControl, err)
	}
	c := &Client{nc: nc, replies: make(chan Event, 1), events: make(chan Event, clientQueue), done: make(chan struct{})}
	sc := bufio.NewScanner(nc)
	sc.Buffer(make([]byte, 64<<10), maxControlLine)
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &c.hello) != nil || c.hello.Event != "hello" {
		nc.Close()
		return nil, fmt.Errorf("%w: the socket at %s did not greet as an acpscope proxy", ErrNoControl, path)
	}
	_ = nc.SetReadDeadline(time.Time{})
	go c.read(sc) // the reader: ends when the proxy or Close hangs up
	return c, nil
}

// Intercept reports whether the proxy allows holding messages.
func (c *Client) Intercept() bool { return c.hello.Intercept }

// Events delivers "held" and "released" events; it is closed when the
// connection ends.
func (c *Client) Events() <-chan Event { return c.events }

// Close hangs up: the proxy releases whatever this client held.
func (c *Client) Close() error { return c.nc.Close() }

func (c *Client) read(sc *bufio.Scanner) {
	defer close(c.events)
	defer close(c.done)
	for sc.Scan() {
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Event == "reply" {
			c.replies <- ev
			continue
		}
		select {
		case c.events <- ev:
		default: // a reader that does not keep up loses events, not the connection
		}
	}
}

// Do sends one request and returns its reply.
func (c *Client) Do(req Request) (Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return Event{}, err
	}
	if _, err := c.nc.Write(append(b, '\n')); err != nil {
		return Event{}, fmt.Errorf("control socket: %w", err)
	}
	select {
	case ev := <-c.replies:
		if ev.Error != "" {
			return ev, errors.New(ev.Error)
		}
		return ev, nil
	case <-c.done:
		return Event{}, errors.New("control socket: the proxy hung up")
	}
}

// Send injects msg toward "agent" or "client" on connection conn.
func (c *Client) Send(to string, conn uint32, msg []byte) (uint64, error) {
	s := string(msg)
	ev, err := c.Do(Request{Op: "send", To: to, Conn: conn, Message: &s})
	return ev.ID, err
}

// Hold holds what filter matches from now on ("" stops holding).
func (c *Client) Hold(filter string) error {
	_, err := c.Do(Request{Op: "hold", Filter: &filter})
	return err
}

// Release gives held message id its verdict (forward, edit with msg, drop).
func (c *Client) Release(id uint64, verdict string, msg []byte) error {
	req := Request{Op: "release", ID: id, Verdict: verdict}
	if msg != nil {
		s := string(msg)
		req.Message = &s
	}
	_, err := c.Do(req)
	return err
}

// ReleaseAll forwards everything held unchanged; it returns how many.
func (c *Client) ReleaseAll() (int, error) {
	ev, err := c.Do(Request{Op: "release-all"})
	return int(ev.ID), err
}
