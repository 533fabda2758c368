package bridge

import (
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Interception on serve (ServeOptions.Intercept). Each connection's agent
// speaks stdio, where messages are whole lines: a fault plan or a person
// holding messages acts there. A client message goes to the interceptor
// instead of the agent's stdin, an agent message instead of the router;
// what it delivers, the servePort writes (or routes) and records.
//
// As on connect, a message is recorded once, as what happened to it: the
// HTTP side then records only statuses (statusOnly), and the port records
// each message without its envelope. Without an interceptor none of this
// runs.

// servePort is the tap.Port of one serve connection.
type servePort struct {
	c   *serveConn
	rec tap.Recorder
}

func (p *servePort) Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error {
	if f == nil {
		p.rec.Frame(p.c.num, dir, tap.Now(), msg, 0, nil)
	} else {
		p.rec.Altered(p.c.num, dir, tap.Now(), msg, nil, f)
	}
	if dir == wire.DirClient {
		return p.c.sendNow(msg)
	}
	p.c.routeNow(msg)
	return nil
}

func (p *servePort) Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault) {
	p.rec.Altered(p.c.num, dir, t, msg, nil, f)
}

// Close tears the connection down, as if the client had gone.
func (p *servePort) Close() { p.c.close() }

// Kill stops the connection's agent at once.
func (p *servePort) Kill() { _ = p.c.agent.Kill() }
