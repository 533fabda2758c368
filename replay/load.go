package replay

import (
	"fmt"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Load reads the protocol messages of a capture in order, with their
// bodies, as the store classified and paired them: kind, id, method and
// session come from the records (a response's from its request), never
// from parsing the bodies again. Batch frames are read through their
// members, which are records of their own; stderr and lines that are not
// JSON-RPC are left out. With session set, only that session and the
// connection-level messages around it are kept.
func Load(src capture.Source, session string) ([]protocol.Msg, error) {
	var (
		msgs []protocol.Msg
		err  error
	)
	scanErr := src.Scan(1, func(r *capture.Record) bool {
		switch r.Kind {
		case wire.KindRequest, wire.KindNotification, wire.KindResponse, wire.KindError:
		default:
			return true
		}
		m := r.Msg
		if m.Body, err = src.Body(r.Seq); err != nil {
			err = fmt.Errorf("reading record %d: %w", r.Seq, err)
			return false
		}
		msgs = append(msgs, m)
		return true
	})
	if scanErr != nil {
		return nil, fmt.Errorf("reading the capture: %w", scanErr)
	}
	if err != nil {
		return nil, err
	}
	if session != "" {
		if !contains(Sessions(msgs), session) {
			return nil, fmt.Errorf("no session %q in the capture (sessions: %v)", session, Sessions(msgs))
		}
		msgs = OnlySession(msgs, session)
	}
	if len(msgs) == 0 {
		return nil, ErrNoMessages
	}
	return msgs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
