package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/wire"
)

// Intercept, send and resend on a live capture: the inspector talks to
// the proxy over the capture's private control socket (package fault),
// never a network port. Holding needs a proxy started with
// --allow-intercept; sending works with any proxy that opened the socket.
// Closing the inspector hangs up, and the proxy then forwards unchanged
// everything this inspector held.

// controlDialWait bounds connecting to a control socket: it is local, so
// a proxy that does not answer at once is not going to.
const controlDialWait = 2 * time.Second

// control is the capture view's link to its proxy. Its fields belong to
// the UI goroutine; the events worker only posts.
type control struct {
	c      *fault.Client
	events *job
	filter string           // what is held, "" when not holding
	held   []fault.HeldView // in arrival order
}

// connectControl dials the live capture's control socket once.
func (cv *captureView) connectControl() (*control, error) {
	if cv.ctl != nil {
		return cv.ctl, nil
	}
	if !cv.live {
		return nil, fmt.Errorf("intercept and send act on a live capture: this one has finished")
	}
	c, err := fault.Dial(cv.path, controlDialWait)
	if errors.Is(err, fault.ErrNoControl) {
		return nil, errors.New("this proxy takes no commands: start it with --allow-intercept (acpscope --allow-intercept -- AGENT)")
	}
	if err != nil {
		return nil, err
	}
	ctl := &control{c: c}
	events := c.Events()
	ctl.events = cv.a.start(func(j *job) { // control events worker: ends when the proxy or the view hangs up
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					cv.a.post(func() { cv.controlLost(ctl) })
					return
				}
				cv.a.post(func() { cv.controlEvent(ctl, ev) })
			case <-j.stopc:
				return
			case <-cv.a.done:
				return
			}
		}
	})
	cv.ctl = ctl
	return ctl, nil
}

// closeControl hangs up: the proxy releases whatever was held.
func (cv *captureView) closeControl() {
	if cv.ctl == nil {
		return
	}
	cv.ctl.c.Close()
	cv.ctl.events.stop()
	cv.ctl = nil
	cv.rows.setHeld(nil)
}

// controlEvent takes what the proxy says: a message held, or released.
func (cv *captureView) controlEvent(ctl *control, ev fault.Event) {
	switch ev.Event {
	case "held":
		if ev.Held != nil {
			ctl.held = append(ctl.held, *ev.Held)
			cv.message = fmt.Sprintf("held #%d %s: h to forward, edit or drop it", ev.Held.ID, heldSummary(ev.Held))
		}
	case "released":
		for i := range ctl.held {
			if ctl.held[i].ID == ev.ID {
				ctl.held = append(ctl.held[:i], ctl.held[i+1:]...)
				break
			}
		}
		if ev.Note != "" {
			cv.message = fmt.Sprintf("held #%d: %s", ev.ID, ev.Note)
		}
	}
	cv.rows.setHeld(ctl.held)
	if cv.a.heldPage != nil {
		cv.a.heldPage.refresh()
	}
}

// controlLost: the proxy ended or hung up.
func (cv *captureView) controlLost(ctl *control) {
	if cv.ctl != ctl {
		return
	}
	cv.ctl.events.stop()
	cv.ctl = nil
	cv.rows.setHeld(nil)
	cv.message = "the proxy's control socket closed: nothing is held any more"
}

// toggleIntercept starts holding (asking for the filter) or stops.
func (cv *captureView) toggleIntercept() {
	ctl, err := cv.connectControl()
	if err != nil {
		cv.message = err.Error()
		return
	}
	if !ctl.c.Intercept() {
		cv.message = "this proxy was not started with --allow-intercept: restart it as acpscope --allow-intercept -- AGENT (send works: S)"
		return
	}
	if ctl.filter == "" {
		cv.openBar("intercept")
		return
	}
	cv.controlDo(func(c *fault.Client) (string, error) {
		if err := c.Hold(""); err != nil {
			return "", err
		}
		n, err := c.ReleaseAll()
		return fmt.Sprintf("intercept off; %d released unchanged", n), err
	}, func() { ctl.filter = "" })
}

// startIntercept holds what filter matches from now on.
func (cv *captureView) startIntercept(filter string) {
	ctl := cv.ctl
	if ctl == nil {
		return
	}
	if strings.TrimSpace(filter) == "" {
		cv.message = "intercept needs a filter, e.g. method:session/request_permission"
		return
	}
	cv.controlDo(func(c *fault.Client) (string, error) {
		return "intercepting " + filter + ": matching messages wait here (h)", c.Hold(filter)
	}, func() { ctl.filter = filter })
}

// controlDo runs a control request off the UI goroutine, then shows its
// outcome and, when it succeeded, runs then on the UI goroutine.
func (cv *captureView) controlDo(req func(c *fault.Client) (string, error), then func()) {
	ctl := cv.ctl
	if ctl == nil {
		return
	}
	cv.a.start(func(j *job) { // control request worker
		msg, err := req(ctl.c)
		cv.a.post(func() {
			if err != nil {
				cv.message = "the proxy refused: " + err.Error()
				return
			}
			if then != nil {
				then()
			}
			cv.message = msg
			if cv.a.heldPage != nil {
				cv.a.heldPage.refresh()
			}
		})
	})
}

// interceptText is the status bar's word on interception, "" when off.
func (cv *captureView) interceptText(room int) string {
	if cv.ctl == nil || cv.ctl.filter == "" {
		return ""
	}
	s := "[black:orange] ⏸ " + esc(clip(cv.ctl.filter, max(room, 8))) + " [-:-]"
	if n := len(cv.ctl.held); n > 0 {
		s += fmt.Sprintf(" [orange::b]%d held (h)[-::-]", n)
	}
	return s
}

// heldSummary names a held message: its direction and method or kind.
func heldSummary(h *fault.HeldView) string {
	c := wire.Classify([]byte(h.Message))
	what := c.Method
	if what == "" {
		what = c.Kind.String()
		if len(c.ID) > 0 {
			what += " " + string(c.ID)
		}
	}
	arrow := "→"
	if h.Dir == wire.DirAgent.String() {
		arrow = "←"
	}
	return arrow + " " + what
}

// Sending. A message is edited as text whose first lines may be comments
// (#) saying where it goes: "# to: agent" or "# to: client". An empty
// message cancels.

// composeHeader starts the text of a message to send toward to.
func composeHeader(to, why string) string {
	return "# to: " + to + "    (agent or client; lines starting with # are ignored; an empty message cancels)\n# " + why + "\n"
}

// parseComposed reads an edited message: where it goes, and its bytes
// (one line, as the wire carries it). ok is false when it was emptied.
func parseComposed(text string) (to string, msg []byte, ok bool, err error) {
	to = "agent"
	var body []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			if v, found := strings.CutPrefix(t, "# to:"); found {
				if f := strings.Fields(v); len(f) > 0 {
					to = f[0]
				}
			}
			continue
		}
		body = append(body, line)
	}
	raw := bytes.TrimSpace([]byte(strings.Join(body, "\n")))
	if len(raw) == 0 {
		return to, nil, false, nil
	}
	if to != "agent" && to != "client" {
		return to, nil, false, fmt.Errorf("\"# to: %s\": a message goes to agent or client", to)
	}
	if !json.Valid(raw) {
		return to, nil, false, fmt.Errorf("not valid JSON: fix it, or empty it to cancel")
	}
	// The wire carries one line: an edited, pretty message is compacted.
	var line bytes.Buffer
	if err := json.Compact(&line, raw); err != nil {
		return to, nil, false, err
	}
	return to, line.Bytes(), true, nil
}

// sendNew composes a message from a template and sends it.
func (cv *captureView) sendNew() {
	ctl, err := cv.connectControl()
	if err != nil {
		cv.message = err.Error()
		return
	}
	session, conn := cv.currentSession()
	tmpl := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + session + `"}}`
	cv.a.editText("send a message", composeHeader("agent", "a new message, sent as it is after this header")+pretty(tmpl), func(text string) error {
		return cv.sendComposed(ctl, text, conn)
	})
}

// resend sends the selected record again toward where it went, as it
// was (edit false) or edited first.
func (cv *captureView) resend(edit bool) {
	seq := cv.rows.seqAt(cv.selected())
	if seq == 0 {
		return
	}
	rec, err := cv.src.Record(seq)
	if err != nil {
		cv.message = fmt.Sprintf("reading message #%d: %v", seq, err)
		return
	}
	if !rec.Kind.IsProtocol() {
		cv.message = fmt.Sprintf("#%d is %s, not a message: nothing to resend", seq, rec.Kind)
		return
	}
	body, err := cv.src.Body(seq)
	if err != nil {
		cv.message = fmt.Sprintf("reading message #%d: %v", seq, err)
		return
	}
	ctl, err := cv.connectControl()
	if err != nil {
		cv.message = err.Error()
		return
	}
	to := "agent"
	if rec.Dir == wire.DirAgent {
		to = "client"
	}
	if !edit {
		msg := append([]byte(nil), body...)
		conn := rec.Conn
		cv.controlDo(func(c *fault.Client) (string, error) {
			_, err := c.Send(to, conn, msg)
			return fmt.Sprintf("resent #%d to the %s", seq, to), err
		}, nil)
		return
	}
	conn := rec.Conn
	cv.a.editText(fmt.Sprintf("resend #%d", seq), composeHeader(to, fmt.Sprintf("message #%d, to send again", seq))+pretty(string(body)), func(text string) error {
		return cv.sendComposed(ctl, text, conn)
	})
}

// sendComposed sends an edited message on connection conn (several in
// captures of serve and proxy); an error keeps the editor open.
func (cv *captureView) sendComposed(ctl *control, text string, conn uint32) error {
	to, msg, ok, err := parseComposed(text)
	if err != nil {
		return err
	}
	if !ok {
		cv.message = "nothing sent"
		return nil
	}
	cv.controlDo(func(c *fault.Client) (string, error) {
		_, err := c.Send(to, conn, msg)
		return fmt.Sprintf("sent %d bytes to the %s", len(msg), to), err
	}, nil)
	return nil
}

// currentSession is the session and connection of the selected
// message, for templates; a placeholder session when it has none.
func (cv *captureView) currentSession() (string, uint32) {
	session, conn := "SESSION_ID", uint32(0)
	if seq := cv.rows.seqAt(cv.selected()); seq != 0 {
		if rec, err := cv.src.Record(seq); err == nil {
			conn = rec.Conn
			if rec.Session != "" {
				session = rec.Session
			}
		}
	}
	return session, conn
}

// pretty indents a JSON message for editing; other text is kept.
func pretty(msg string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(msg), "", "  ") != nil {
		return msg
	}
	return b.String() + "\n"
}
