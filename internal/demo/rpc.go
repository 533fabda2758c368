package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// message is one JSON-RPC 2.0 message in either direction. Params and
// results stay raw so each handler decodes only what it needs.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// handlers are a connection's hooks. Both run on the reader goroutine;
// a request handler that must wait for the peer starts its own goroutine
// and answers later with conn.reply.
type handlers struct {
	request func(id json.RawMessage, method string, params json.RawMessage)
	notify  func(method string, params json.RawMessage) error
	// lenient: answer malformed input with a JSON-RPC error and go on
	// (what an agent does) instead of ending the connection.
	lenient bool
}

// conn is a newline-delimited JSON-RPC 2.0 connection: one reader
// goroutine (started by start), serialised writes, outgoing calls with
// integer ids from 0 (an id of 0 is a classic pairing bug worth showing).
type conn struct {
	r  *bufio.Reader
	w  io.Writer
	h  handlers
	wm sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message

	done   chan struct{}
	err    error       // why the reader stopped; nil on a clean EOF
	hungUp atomic.Bool // we closed the input ourselves: read errors are expected
}

func newConn(r io.Reader, w io.Writer, h handlers) *conn {
	return &conn{r: bufio.NewReader(r), w: w, h: h, pending: map[string]chan *message{}, done: make(chan struct{})}
}

// start runs the reader goroutine; it stops at end of input or on a
// protocol error, and closes c.done.
func (c *conn) start() { go c.readLoop() }

func (c *conn) readLoop() {
	err := c.read()
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

func (c *conn) read() error {
	for {
		line, err := c.r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := c.dispatch(bytes.TrimSpace(line)); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if c.hungUp.Load() {
				return nil
			}
			return fmt.Errorf("reading from peer: %w", err)
		}
	}
}

// Err reports why the connection ended (nil for a clean EOF).
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *conn) dispatch(line []byte) error {
	if line[0] == '[' {
		// A batch: handled element by element, answers sent one by one.
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
			return c.malformed(CodeInvalidRequest, "bad batch: %s", line)
		}
		for _, e := range elems {
			if err := c.dispatchOne(e); err != nil {
				return err
			}
		}
		return nil
	}
	return c.dispatchOne(line)
}

func (c *conn) dispatchOne(line []byte) error {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return c.malformed(CodeParseError, "invalid JSON %.80q: %v", line, err)
	}
	if m.JSONRPC != "2.0" {
		return c.malformed(CodeInvalidRequest, "jsonrpc is %q, want \"2.0\"", m.JSONRPC)
	}
	hasID := len(m.ID) > 0
	switch {
	case m.Method != "" && hasID:
		c.h.request(m.ID, m.Method, m.Params)
		return nil
	case m.Method != "":
		return c.h.notify(m.Method, m.Params)
	case hasID && (m.Result != nil || m.Error != nil):
		return c.deliver(&m)
	default:
		return c.malformed(CodeInvalidRequest, "message is neither request, notification nor response: %.80q", line)
	}
}

// malformed answers bad input with an error (id null) when lenient, or
// ends the connection with a protocol error.
func (c *conn) malformed(code int, format string, args ...any) error {
	if !c.h.lenient {
		return protocolErrorf(format, args...)
	}
	_ = c.send(&message{ID: json.RawMessage("null"), Error: rpcErrorf(code, format, args...)})
	return nil
}

func (c *conn) deliver(m *message) error {
	key := string(m.ID)
	c.mu.Lock()
	ch, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if !ok {
		return protocolErrorf("response to id %s, which was never sent or was already answered", key)
	}
	ch <- m // buffered: never blocks the reader
	return nil
}

// send writes one message as one line.
func (c *conn) send(m *message) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", m.Method, err)
	}
	c.wm.Lock()
	defer c.wm.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing to peer: %w", err)
	}
	return nil
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding %s params: %w", method, err)
	}
	return c.send(&message{Method: method, Params: p})
}

// reply answers a request with a result, or with err (an *RPCError keeps
// its code; anything else becomes an internal error).
func (c *conn) reply(id json.RawMessage, result any, err error) error {
	m := &message{ID: id}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = rpcErrorf(CodeInternalError, "%v", err)
		}
		m.Error = re
	} else {
		b, merr := json.Marshal(result)
		if merr != nil {
			return fmt.Errorf("encoding result: %w", merr)
		}
		m.Result = b
	}
	return c.send(m)
}

// call sends a request and waits for its response, decoding the result
// into out (when non-nil). A JSON-RPC error comes back as *RPCError. It
// gives up when the connection ends or ctx is done; a late answer to an
// abandoned call is still accepted, not treated as a stray response.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding %s params: %w", method, err)
	}
	ch := make(chan *message, 1)
	c.mu.Lock()
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	c.nextID++
	c.pending[string(id)] = ch
	c.mu.Unlock()
	if err := c.send(&message{ID: id, Method: method, Params: p}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		return decodeResponse(method, m, out)
	case <-c.done:
		select { // the answer may have been the last line read
		case m := <-ch:
			return decodeResponse(method, m, out)
		default:
		}
		return fmt.Errorf("%s: %w", method, ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func decodeResponse(method string, m *message, out any) error {
	if m.Error != nil {
		return fmt.Errorf("%s: %w", method, m.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return protocolErrorf("%s result %.80q: %v", method, m.Result, err)
	}
	return nil
}

// decodeParams decodes request or notification params, turning a bad
// shape into an invalid-params error.
func decodeParams(method string, params json.RawMessage, out any) error {
	if len(params) == 0 {
		return rpcErrorf(CodeInvalidParams, "%s: params missing", method)
	}
	if err := json.Unmarshal(params, out); err != nil {
		return rpcErrorf(CodeInvalidParams, "%s: %v", method, err)
	}
	return nil
}
