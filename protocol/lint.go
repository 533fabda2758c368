package protocol

import (
	"fmt"
	"sort"

	"github.com/acpscope/acpscope/wire"
)

// LintOptions tune Lint.
type LintOptions struct {
	// Finished says the capture is complete (the proxy ended), so requests
	// still unanswered at the end are findings rather than in flight.
	Finished bool
	// MinSeverity drops findings below it.
	MinSeverity Severity
	// Schema, when set, validates every message against the ACP schema.
	Schema *SchemaValidator
}

// Lint checks a capture's messages, in capture order, against every rule
// of Rules and returns the findings ordered by their first sequence number.
func Lint(msgs []Msg, opts LintOptions) []Finding {
	all := msgs
	msgs, alt := received(msgs)
	out := lintReceived(msgs, opts)
	if alt != nil {
		byseq := make(map[uint64]*Msg, len(all))
		for i := range all {
			byseq[all[i].Seq] = &all[i]
		}
		out = alt.explain(out, byseq)
	}
	kept := out[:0]
	for _, f := range out {
		if f.Severity >= opts.MinSeverity {
			kept = append(kept, f)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return firstSeq(kept[i]) < firstSeq(kept[j]) })
	return kept
}

// lintReceived runs every rule over msgs, as their receivers saw them.
func lintReceived(msgs []Msg, opts LintOptions) []Finding {
	// Each connection has its own lifecycle and id spaces; the server's
	// connection ids are shared knowledge across them.
	var all []Finding
	http := &httpState{}
	http.init()
	for _, conn := range byConn(msgs) {
		l := newLinter(opts, http)
		forEachUnit(conn, l.unit)
		l.end()
		all = append(all, l.out...)
	}
	l := newLinter(opts, http)
	for _, run := range RunOutputs(msgs) {
		l.deltaRun(run)
	}
	all = append(all, l.out...)
	if opts.Schema != nil {
		all = append(all, opts.Schema.Lint(msgs)...)
	}
	return all
}

// byConn splits msgs by connection, each keeping capture order.
func byConn(msgs []Msg) [][]Msg {
	index := map[uint32]int{}
	var out [][]Msg
	for _, m := range msgs {
		i, ok := index[m.Conn]
		if !ok {
			i = len(out)
			index[m.Conn] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	return out
}

func firstSeq(f Finding) uint64 {
	if len(f.Seqs) == 0 {
		return ^uint64(0)
	}
	return f.Seqs[0]
}

// linter holds what one pass over a capture has learnt so far. Its
// methods are grouped by rule family in the lint_*.go files.
type linter struct {
	opts LintOptions
	out  []Finding

	rpc rpcState
	// acp is the ACP lifecycle of the hop being judged: hops holds one
	// per proxy-chain hop, since on the wire between a conductor and a
	// proxy the proxy's conversation with its predecessor (hop 0) and
	// the one with its successor (hop 1, wrapped) are two lifecycles.
	acp   *acpState
	hops  map[uint8]*acpState
	chain chainState
	batch batchState
	http  *httpState
	// oldHTTP is set once http/http2 has been reported for this
	// connection: one finding says it, not one per exchange.
	oldHTTP bool
}

func newLinter(opts LintOptions, http *httpState) *linter {
	l := &linter{opts: opts, http: http}
	l.rpc.init()
	l.hops = map[uint8]*acpState{}
	l.at(0)
	l.batch.init()
	return l
}

// at makes hop's lifecycle the one the ACP checks read and write.
func (l *linter) at(hop uint8) *acpState {
	a := l.hops[hop]
	if a == nil {
		a = new(acpState)
		a.init()
		l.hops[hop] = a
	}
	l.acp = a
	return a
}

// report adds a finding of a rule from the table; an unknown id is a
// programming error.
func (l *linter) report(id string, seqs []uint64, format string, args ...any) {
	r, ok := ruleIndex[id]
	if !ok {
		panic("protocol: lint rule " + id + " is not in the rule table")
	}
	l.out = append(l.out, Finding{Rule: id, Severity: r.Severity, Message: fmt.Sprintf(format, args...), Seqs: seqs, Ref: r.Ref})
}

func (l *linter) unit(u unit) {
	if u.HTTP != nil && u.batch == 0 {
		l.httpUnit(u)
	}
	if u.HTTP == nil && u.batch == 0 {
		l.stdioUnit(u)
	} else if u.Kind == wire.KindInvalidUTF8 {
		l.report("stdio/invalid-utf8", []uint64{u.Seq}, "%s sent a message that is not valid UTF-8", sender(u.Dir))
	}
	if u.Kind == wire.KindBatch {
		l.batchFrame(u)
		return
	}
	l.rpcUnit(u)
}

func (l *linter) end() {
	l.rpcEnd()
	l.acpEnd()
	l.batchEnd()
}

func (l *linter) deltaRun(run *RunOutput) {
	if !run.Mismatch() {
		return
	}
	seqs := append([]uint64{run.RequestSeq}, run.DeltaSeqs...)
	if run.ResponseSeq != 0 {
		seqs = append(seqs, run.ResponseSeq)
	}
	if run.MergeErr != nil {
		l.report("acp/delta-mismatch", seqs, "agents/run %q: its progress deltas cannot be joined: %v", run.Agent, run.MergeErr)
		return
	}
	l.report("acp/delta-mismatch", seqs, "agents/run %q: the %d progress deltas join to %s but the final output is %s",
		run.Agent, len(run.DeltaSeqs), short(marshalValue(run.Rebuilt)), short(marshalValue(run.Final)))
}

func sender(d wire.Dir) string {
	if d == wire.DirAgent {
		return "the agent"
	}
	return "the client"
}

// short keeps messages to one readable line.
func short(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
