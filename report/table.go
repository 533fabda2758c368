package report

import (
	"encoding/base64"
	"math"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// row is one message of the table, as the page's script reads it. The
// keys are short: a report of ten thousand messages carries each of them
// ten thousand times.
type row struct {
	Seq     uint64         `json:"s"`
	T       float64        `json:"t"` // ms since the first record
	Dir     string         `json:"d"` // "c": client→agent, "a": agent→client
	Kind    string         `json:"k"`
	Method  string         `json:"m,omitempty"`
	ID      string         `json:"i,omitempty"`
	Session string         `json:"ss,omitempty"`
	Size    int64          `json:"z"`
	Peer    uint64         `json:"p,omitempty"`
	Latency float64        `json:"l,omitempty"` // ms, on a response
	Flags   string         `json:"f,omitempty"`
	Conn    uint32         `json:"c,omitempty"`
	Parent  uint64         `json:"pa,omitempty"`
	Code    int64          `json:"ec,omitempty"`
	HTTP    *wire.Envelope `json:"h,omitempty"`
	// Fault says what acpscope did to the message (a fault plan, a hold,
	// a hand-sent message); the row is marked with ⚑.
	Fault string `json:"ft,omitempty"`
	// Body is the exact bytes as text, or in base64 when they are not
	// UTF-8 (Enc "base64"); a folded body holds only its beginning.
	Body   string `json:"b"`
	Enc    string `json:"e,omitempty"`
	Folded bool   `json:"fo,omitempty"`
}

// tableFinding is a finding as the script marks rows with it.
type tableFinding struct {
	Severity string   `json:"sev"`
	Rule     string   `json:"rule"`
	Message  string   `json:"msg"`
	Seqs     []uint64 `json:"seqs"`
}

// tableDoc is the JSON document the page's script builds the table, the
// timeline and the message details from.
type tableDoc struct {
	Start    int64          `json:"start"` // unix ms of the first record
	Rows     []row          `json:"rows"`
	Findings []tableFinding `json:"findings"`
	Fold     int            `json:"fold"`
}

// tableData encodes the records for the page's script.
func tableData(meta capture.Meta, recs []capture.Record, fs []protocol.Finding, o *Options) ([]byte, error) {
	doc := tableDoc{Rows: make([]row, 0, len(recs)), Findings: []tableFinding{}, Fold: o.FoldBytes}
	var t0 int64
	if len(recs) > 0 {
		t0 = recs[0].Time
		doc.Start = t0 / 1e6
	} else if !meta.Start.IsZero() {
		doc.Start = meta.Start.UnixMilli()
	}
	for i := range recs {
		doc.Rows = append(doc.Rows, tableRow(&recs[i], t0, o))
	}
	for _, f := range fs {
		doc.Findings = append(doc.Findings, tableFinding{Severity: f.Severity.String(), Rule: f.Rule, Message: f.Message, Seqs: f.Seqs})
	}
	return marshal(doc)
}

func tableRow(r *capture.Record, t0 int64, o *Options) row {
	rw := row{
		Seq: r.Seq, T: ms(r.Time - t0), Dir: "a", Kind: r.Kind.String(), Method: r.Method,
		ID: string(r.ID), Session: r.Session, Size: r.Size, Peer: r.Peer, Conn: r.Conn,
		Parent: r.Parent, Code: r.ErrorCode, HTTP: r.HTTP, Fault: r.Fault.String(),
	}
	if r.Dir == wire.DirClient {
		rw.Dir = "c"
	}
	if r.Kind.IsResponse() && r.Peer != 0 {
		rw.Latency = ms(int64(r.Latency))
	}
	for i, n := range r.Flags.Names() {
		if i > 0 {
			rw.Flags += " "
		}
		rw.Flags += n
	}
	body := r.Body
	if len(body) > o.FoldBytes {
		body = body[:o.FoldHead]
		rw.Folded = true
	}
	switch {
	case utf8.Valid(body):
		rw.Body = string(body)
	case rw.Folded && utf8.Valid(trimRune(body)):
		rw.Body = string(trimRune(body))
	default:
		rw.Body, rw.Enc = base64.StdEncoding.EncodeToString(body), "base64"
	}
	return rw
}

// trimRune drops an incomplete UTF-8 sequence that a fold cut off.
func trimRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// ms converts nanoseconds to milliseconds, to the microsecond.
func ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
