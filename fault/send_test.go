package fault_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// portLog is a tap.Port that notes what it is asked to deliver.
type portLog struct {
	mu  sync.Mutex
	got []string
}

func (p *portLog) Deliver(dir wire.Dir, msg []byte, _ *protocol.Fault) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, dir.String()+" "+string(msg))
	return nil
}
func (p *portLog) Record(wire.Dir, int64, []byte, *protocol.Fault) {}
func (p *portLog) Close()                                          {}
func (p *portLog) Kill()                                           {}

// TestSendPicksConnection: send without --conn reaches a run's only
// connection, whatever its number (an HTTP proxy's start at 1); with
// several it names them; a connection whose both directions ended is
// gone from the list.
func TestSendPicksConnection(t *testing.T) {
	e := fault.New(fault.Options{AllowIntercept: true})
	defer e.Close()
	if _, err := e.Send(0, wire.DirClient, []byte(msg(1))); err == nil || !strings.Contains(err.Error(), "no connection is open") {
		t.Errorf("send with nothing open: %v", err)
	}
	var one, three portLog
	c1 := e.Open(1, &one)
	if _, err := e.Send(0, wire.DirClient, []byte(msg(1))); err != nil {
		t.Fatalf("send to the only connection: %v", err)
	}
	c3 := e.Open(3, &three)
	_, err := e.Send(0, wire.DirClient, []byte(msg(2)))
	if err == nil || !strings.Contains(err.Error(), "[1 3]") || !strings.Contains(err.Error(), "--conn") {
		t.Errorf("send with two open: %v, want the open connections and --conn named", err)
	}
	if _, err := e.Send(3, wire.DirAgent, []byte(msg(3))); err != nil {
		t.Fatal(err)
	}
	c1.End(wire.DirClient)
	c1.End(wire.DirClient) // the same direction twice is still one
	if _, err := e.Send(0, wire.DirClient, []byte(msg(4))); err == nil {
		t.Error("a connection with one direction still open was forgotten")
	}
	c1.End(wire.DirAgent)
	if _, err := e.Send(0, wire.DirClient, []byte(msg(5))); err != nil {
		t.Fatalf("send once only connection 3 is open: %v", err)
	}
	c3.End(wire.DirClient)
	if got, want := strings.Join(one.got, "\n"), "client "+msg(1); got != want {
		t.Errorf("connection 1 was given\n%s\nwant\n%s", got, want)
	}
	if got, want := strings.Join(three.got, "\n"), "agent "+msg(3)+"\nclient "+msg(5); got != want {
		t.Errorf("connection 3 was given\n%s\nwant\n%s", got, want)
	}
}
