package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// CaptureDiff compares two conversations (acpscope diff).
type CaptureDiff struct {
	Entries []Entry
	// Meta lists differences in what the peers said about themselves in
	// initialize: versions, capabilities, auth methods.
	Meta []Change
	// Latency compares per-method response times.
	Latency []LatencyDelta
	// AlteredA and AlteredB list the messages acpscope altered on each
	// side (fault plans, holds, sends). Entries compare what each side
	// received, so a dropped message is among these, not a gap.
	AlteredA []Altered
	AlteredB []Altered
}

// Altered is one message acpscope altered in a capture.
type Altered struct {
	Seq    uint64          `json:"seq"`
	Dir    string          `json:"dir"`
	Method string          `json:"method,omitempty"`
	Fault  *protocol.Fault `json:"fault"`
}

// altered lists the messages of msgs that carry a fault.
func altered(msgs []protocol.Msg) []Altered {
	var out []Altered
	for _, m := range msgs {
		if m.Fault != nil {
			out = append(out, Altered{Seq: m.Seq, Dir: m.Dir.String(), Method: m.Method, Fault: m.Fault})
		}
	}
	return out
}

// LatencyDelta is one method's median latency on each side.
type LatencyDelta struct {
	Method string        `json:"method"`
	A      time.Duration `json:"a"`
	B      time.Duration `json:"b"`
	CountA int           `json:"countA"`
	CountB int           `json:"countB"`
}

// Same reports whether the two conversations match (latency aside).
func (d *CaptureDiff) Same() bool { return Mismatches(d.Entries) == 0 && len(d.Meta) == 0 }

// DiffConversations aligns a and b (both directions) and compares them.
func DiffConversations(a, b []protocol.Msg, opts CompareOptions, strict bool) *CaptureDiff {
	altA, altB := altered(a), altered(b)
	a, b = Protocol(protocol.Received(a)), Protocol(protocol.Received(b))
	peerA, peerB := protocol.Pair(a), protocol.Pair(b)
	if opts.Binder == nil {
		opts.Binder, opts.Learn = NewBinder(), true
	}
	d := &CaptureDiff{Entries: Compare(Fold(a, strict), Fold(b, strict), opts)}
	d.Meta = initializeChanges(a, b)
	d.Latency = latencyDeltas(latencies(a, peerA), latencies(b, peerB))
	d.AlteredA, d.AlteredB = altA, altB
	return d
}

// initializeChanges compares the initialize exchange of each side.
func initializeChanges(a, b []protocol.Msg) []Change {
	var out []Change
	for _, dir := range []wire.Dir{wire.DirClient, wire.DirAgent} {
		ma, mb := findInitialize(a, dir), findInitialize(b, dir)
		prefix := "initialize request "
		if dir == wire.DirAgent {
			prefix = "initialize response "
		}
		switch {
		case ma == nil && mb == nil:
		case ma == nil:
			out = append(out, Change{Path: prefix, Op: "added"})
		case mb == nil:
			out = append(out, Change{Path: prefix, Op: "removed"})
		default:
			for _, c := range DiffJSON(ma.Body, mb.Body, Ignore{"id", "jsonrpc", "**._meta", "**._meta.**"}, nil) {
				c.Path = prefix + c.Path
				out = append(out, c)
			}
		}
	}
	return out
}

func findInitialize(msgs []protocol.Msg, dir wire.Dir) *protocol.Msg {
	for i := range msgs {
		if msgs[i].Method == "initialize" && msgs[i].Dir == dir {
			return &msgs[i]
		}
	}
	return nil
}

// latencyDeltas lists, per method answered on either side, the median
// latency of each.
func latencyDeltas(la, lb map[string][]time.Duration) []LatencyDelta {
	methods := map[string]bool{}
	for m := range la {
		methods[m] = true
	}
	for m := range lb {
		methods[m] = true
	}
	var out []LatencyDelta
	for m := range methods {
		out = append(out, LatencyDelta{Method: m, A: median(la[m]), B: median(lb[m]), CountA: len(la[m]), CountB: len(lb[m])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

// latencies lists each method's response times; peer pairs msgs.
func latencies(msgs []protocol.Msg, peer []int) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for i, m := range msgs {
		if m.Kind.IsResponse() && peer[i] >= 0 {
			out[m.Method] = append(out[m.Method], time.Duration(m.Time-msgs[peer[i]].Time))
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// WriteText prints the diff for people.
func (d *CaptureDiff) WriteText(w io.Writer, nameA, nameB string) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	if len(d.Meta) > 0 {
		fmt.Fprintln(w, "metadata:")
		for _, c := range d.Meta {
			fmt.Fprintf(w, "      %s\n", c)
		}
	}
	if len(d.AlteredA)+len(d.AlteredB) > 0 {
		fmt.Fprintln(w, "messages (as each side received them):")
	} else {
		fmt.Fprintln(w, "messages:")
	}
	WriteEntries(w, d.Entries, "A", "B")
	writeAltered(w, "A", nameA, d.AlteredA)
	writeAltered(w, "B", nameB, d.AlteredB)
	if len(d.Latency) > 0 {
		fmt.Fprintln(w, "latency (median per method, A → B, and how many responses each had):")
		for _, l := range d.Latency {
			fmt.Fprintf(w, "      %-28s %10s → %-10s %s  (%d/%d)\n", l.Method, fmtLatency(l.A, l.CountA), fmtLatency(l.B, l.CountB), delta(l), l.CountA, l.CountB)
		}
	}
}

// writeAltered lists what acpscope altered on one side, when anything.
func writeAltered(w io.Writer, side, name string, alt []Altered) {
	if len(alt) == 0 {
		return
	}
	fmt.Fprintf(w, "altered by acpscope in %s (%s): %s\n", side, name, Count(len(alt), "message", "messages"))
	for _, a := range alt {
		fmt.Fprintf(w, "  ⚑ %s #%d %s %s: %s\n", side, a.Seq, a.Dir, a.Method, a.Fault)
	}
}

func fmtLatency(d time.Duration, n int) string {
	if n == 0 {
		return "-"
	}
	return roundLatency(d).String()
}

// delta is the change between the latencies as printed, so the three
// numbers on a line agree.
func delta(l LatencyDelta) string {
	if l.CountA == 0 || l.CountB == 0 {
		return ""
	}
	d := roundLatency(roundLatency(l.B) - roundLatency(l.A))
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// roundLatency keeps about three significant digits: local responses
// take microseconds, prompts seconds, and one fixed step hid the first
// (an fs call of 48µs printed as 0s).
func roundLatency(d time.Duration) time.Duration {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a >= time.Second:
		return d.Round(time.Millisecond)
	case a >= 100*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case a >= 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case a >= time.Millisecond:
		return d.Round(time.Microsecond)
	case a >= 100*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Nanosecond)
}

// MarshalJSON gives --json its shape: same, entries that differ,
// metadata changes and latency.
func (d *CaptureDiff) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Same    bool           `json:"same"`
		Entries []JSONEntry    `json:"entries"`
		Meta    []Change       `json:"meta"`
		Latency []LatencyDelta `json:"latency"`
		// Present only when acpscope altered a side, so diffs of
		// ordinary captures read as before.
		AlteredA []Altered `json:"alteredA,omitempty"`
		AlteredB []Altered `json:"alteredB,omitempty"`
	}{d.Same(), JSONEntries(d.Entries), nonNil(d.Meta), d.Latency, d.AlteredA, d.AlteredB})
}

func nonNil(c []Change) []Change {
	if c == nil {
		return []Change{}
	}
	return c
}
