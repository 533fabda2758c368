package capture

import (
	"slices"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// MethodStats is what a capture holds of one method: its messages, who
// sent how many bytes, and how long its requests took to be answered.
type MethodStats struct {
	Method string
	// Messages counts every record of the method: requests,
	// notifications and the responses that answer them.
	Messages      int
	Requests      int
	Notifications int
	Errors        int // error responses
	// BytesToAgent and BytesToClient are wire bytes each way: what the
	// client sent (requests, or its answers to the agent's requests) and
	// what the agent sent.
	BytesToAgent  int64
	BytesToClient int64
	// Latency holds, for each paired response, the time since its request.
	Latency Latencies
}

// Tally sums records up per method, for statistics; Add them in any order.
type Tally struct {
	Methods     map[string]*MethodStats
	Faults      map[FaultKey]*FaultStats // what acpscope altered, by who and how
	Records     int
	Bytes       int64
	First, Last int64 // receive times of the earliest and latest record, unix ns
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{Methods: map[string]*MethodStats{}, Faults: map[FaultKey]*FaultStats{}}
}

// FaultKey names one kind of alteration: the rule (or, for a hold or a
// hand-sent message, who did it) and the action.
type FaultKey struct {
	Who    string // the rule's name, or "intercept" / "send"
	Action string
}

// FaultStats counts the records of one kind of alteration by stage.
// Dropped, Forwarded and Injected together are the messages it touched;
// a Replaced record is an original whose changed copy is counted among
// the Forwarded.
type FaultStats struct {
	FaultKey
	Dropped, Replaced, Forwarded, Injected int
}

func (t *Tally) addFault(f *protocol.Fault) {
	k := FaultKey{Who: f.Rule, Action: f.Action}
	if k.Who == "" {
		k.Who = f.By
	}
	s := t.Faults[k]
	if s == nil {
		s = &FaultStats{FaultKey: k}
		t.Faults[k] = s
	}
	switch f.Stage {
	case protocol.StageDropped:
		s.Dropped++
	case protocol.StageReplaced:
		s.Replaced++
	case protocol.StageForwarded:
		s.Forwarded++
	case protocol.StageInjected:
		s.Injected++
	}
}

// SortedFaults returns the alterations by who did them, then action.
func (t *Tally) SortedFaults() []*FaultStats {
	out := make([]*FaultStats, 0, len(t.Faults))
	for _, s := range t.Faults {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *FaultStats) int {
		if c := strings.Compare(a.Who, b.Who); c != 0 {
			return c
		}
		return strings.Compare(a.Action, b.Action)
	})
	return out
}

// Add counts one record (its body is not needed).
func (t *Tally) Add(r *Record) {
	t.Records++
	t.Bytes += r.Size
	if t.First == 0 || r.Time < t.First {
		t.First = r.Time
	}
	t.Last = max(t.Last, r.Time)
	if r.Fault != nil {
		t.addFault(r.Fault)
	}
	name := StatsName(r)
	m := t.Methods[name]
	if m == nil {
		m = &MethodStats{Method: name}
		t.Methods[name] = m
	}
	m.Messages++
	if r.Dir == wire.DirClient && r.Kind != wire.KindStderr {
		m.BytesToAgent += r.Size
	} else {
		m.BytesToClient += r.Size
	}
	switch r.Kind {
	case wire.KindRequest:
		m.Requests++
	case wire.KindNotification:
		m.Notifications++
	case wire.KindError:
		m.Errors++
	}
	if (r.Kind == wire.KindResponse || r.Kind == wire.KindError) && r.Peer != 0 && r.Latency > 0 {
		m.Latency.Add(r.Latency)
	}
}

// StatsName is the row a record counts in: its method (a response's is
// the method it answers), or what it is when it has none: (stderr),
// (batch), (invalid-json) and the like, or (unpaired) for a response
// whose request the capture lacks.
func StatsName(r *Record) string {
	switch {
	case r.Kind == wire.KindStderr:
		return "(stderr)"
	case !r.Kind.IsProtocol():
		return "(" + r.Kind.String() + ")"
	case r.Method != "":
		return r.Method
	case r.Kind == wire.KindBatch:
		return "(batch)"
	}
	return "(unpaired)"
}

// Sorted returns the methods, most messages first, then by name.
func (t *Tally) Sorted() []*MethodStats {
	out := make([]*MethodStats, 0, len(t.Methods))
	for _, m := range t.Methods {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *MethodStats) int {
		if a.Messages != b.Messages {
			return b.Messages - a.Messages
		}
		if a.Method < b.Method {
			return -1
		}
		if a.Method > b.Method {
			return 1
		}
		return 0
	})
	return out
}
