package inspector

import (
	"fmt"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/rivo/tview"
)

// Bodies above asyncBytes are read and rendered on a worker so that
// moving onto a 100 MB message does not freeze the table.
const (
	asyncBytes   = 256 * 1024
	peerMaxBytes = 64 * 1024
)

// showDetail fills the detail pane for the selected row.
func (cv *captureView) showDetail() {
	cv.detailJb.stop()
	if h := cv.rows.heldAt(cv.selected()); h != nil {
		cv.showHeldDetail(h)
		return
	}
	ri := cv.rows.row(cv.selected())
	if ri == nil {
		cv.detailOf = 0
		cv.detail.SetTitle(" detail ")
		if cv.rows.total == 0 {
			cv.detail.SetText(emptyText(cv))
		} else {
			cv.detail.SetText("[red]this message could not be read[-]")
		}
		return
	}
	r := ri.rec
	cv.detailOf = r.Seq
	mode := "pretty"
	if cv.raw {
		mode = "raw"
	}
	cv.detail.SetTitle(fmt.Sprintf(" #%d %s (b raw, x expand, p pair, w save, y copy) ", r.Seq, mode))
	render := func() string {
		return renderDetail(cv.src, &r, cv.raw, cv.expand, cv.findingText(r.Seq))
	}
	if r.Size <= asyncBytes {
		cv.detail.SetText(render()).ScrollToBeginning()
		return
	}
	cv.detail.SetText(fmt.Sprintf("[gray]reading %s…[-]", human.Size(r.Size))).ScrollToBeginning()
	raw, expand, findings := cv.raw, cv.expand, cv.findingText(r.Seq)
	cv.detailJb = cv.a.start(func(j *job) { // detail renderer
		text := renderDetail(cv.src, &r, raw, expand, findings)
		j.post(func() {
			if cv.detailOf == r.Seq {
				cv.detail.SetText(text).ScrollToBeginning()
			}
		})
	})
}

func emptyText(cv *captureView) string {
	switch {
	case cv.filter != nil || cv.markedOnly:
		return "no message matches; f edits the filter, Esc in the bar clears it"
	case cv.live:
		return "waiting for messages…"
	}
	return "this capture holds no messages"
}

func (cv *captureView) findingText(seq uint64) string {
	if cv.rows.findings[seq] == "" {
		return ""
	}
	fs, err := cv.src.Findings()
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, f := range fs {
		for _, s := range f.Seqs {
			if s == seq {
				fmt.Fprintf(&b, "[%s]%s %s[-]: %s\n", colorName(f.Severity.String()), f.Severity, tview.Escape(f.Rule), tview.Escape(f.Message))
				break
			}
		}
	}
	return b.String()
}

func colorName(sev string) string {
	switch sev {
	case "error":
		return "red"
	case "warning":
		return "yellow"
	}
	return "gray"
}

// renderDetail builds the detail text of r: metadata, findings, the body
// (pretty or raw) and the paired message. It reads the store and may run
// on any goroutine.
func renderDetail(src capture.Source, r *capture.Record, raw, expand bool, findings string) string {
	var b strings.Builder
	writeMeta(&b, src, r)
	b.WriteString(findings)
	b.WriteByte('\n')
	body, err := src.Body(r.Seq)
	if err != nil {
		fmt.Fprintf(&b, "[red]body unreadable: %s[-]\n", tview.Escape(err.Error()))
		return b.String()
	}
	writeMCP(&b, src, r, body)
	writeBody(&b, body, r.Kind, raw, expand)
	if r.Peer != 0 {
		writePeer(&b, src, r)
	}
	return b.String()
}

func writeMeta(b *strings.Builder, src capture.Source, r *capture.Record) {
	fmt.Fprintf(b, "[::b]#%d[::-] %s %s  [::b]%s[::-]", r.Seq, r.Dir.Arrow(), r.Dir, r.Kind)
	if r.ID != nil {
		fmt.Fprintf(b, "  id %s", tview.Escape(string(r.ID)))
	}
	if r.Method != "" {
		fmt.Fprintf(b, "  %s", tview.Escape(r.Method))
	}
	if r.Hop > 0 {
		fmt.Fprintf(b, "  [gray]%s[-]", protocol.HopLabel(r.Hop))
	}
	if r.Kind == wire.KindError {
		fmt.Fprintf(b, "  [red]code %d[-]", r.ErrorCode)
	}
	b.WriteByte('\n')
	start := src.Meta().Start
	when := r.When()
	fmt.Fprintf(b, "[gray]time[-] %s", when.Format("2006-01-02 15:04:05.000000"))
	if !start.IsZero() {
		fmt.Fprintf(b, " (+%s)", human.Duration(when.Sub(start)))
	}
	fmt.Fprintf(b, "  [gray]size[-] %s", human.Size(r.Size))
	transport := src.Meta().Transport
	if transport == "" {
		transport = "stdio"
	}
	fmt.Fprintf(b, "  [gray]via[-] %s conn %d", transport, r.Conn)
	if names := r.Flags.Names(); len(names) > 0 {
		fmt.Fprintf(b, "  [fuchsia]%s[-]", strings.Join(names, " "))
	}
	b.WriteByte('\n')
	if r.Session != "" {
		fmt.Fprintf(b, "[gray]session[-] %s\n", tview.Escape(r.Session))
	}
	if r.Parent != 0 {
		fmt.Fprintf(b, "[gray]batch[-] member of #%d\n", r.Parent)
	}
	if r.Peer != 0 {
		fmt.Fprintf(b, "[gray]pair[-] #%d", r.Peer)
		if r.Latency > 0 {
			fmt.Fprintf(b, "  latency [::b]%s[::-]", human.Duration(r.Latency))
		}
		b.WriteString("  (p jumps)\n")
	}
	if h := r.HTTP; h != nil {
		writeEnvelope(b, h)
	}
}

// writeMCP names the MCP message an MCP-over-ACP request, or the answer
// to one, carries.
func writeMCP(b *strings.Builder, src capture.Source, r *capture.Record, body []byte) {
	m := r.Msg
	m.Body = body
	mcp, ok := protocol.DecodeMCP(&m)
	if !ok && r.Kind.IsResponse() && r.Peer != 0 && protocol.MCPMethod(r.Method) != "" {
		if req, err := src.Record(r.Peer); err == nil && req.Size <= peerMaxBytes {
			if req.Body, err = src.Body(r.Peer); err == nil {
				mcp, ok = protocol.DecodeMCPAnswer(&req.Msg, &m)
			}
		}
	}
	if ok {
		fmt.Fprintf(b, "[gray]mcp[-] %s\n", tview.Escape(mcp.Summary()))
	}
}

func writeEnvelope(b *strings.Builder, h *wire.Envelope) {
	fmt.Fprintf(b, "[gray]http[-] %s %s", h.Method, tview.Escape(h.Path))
	if h.Proto != "" {
		fmt.Fprintf(b, " %s", tview.Escape(h.Proto))
	}
	if h.Status != 0 {
		fmt.Fprintf(b, " → %d", h.Status)
	}
	if h.Stream != "" {
		fmt.Fprintf(b, "  stream %s", h.Stream)
	}
	if h.ConnectionID != "" {
		fmt.Fprintf(b, "  Acp-Connection-Id %s", tview.Escape(h.ConnectionID))
	}
	if h.SessionID != "" {
		fmt.Fprintf(b, "  Acp-Session-Id %s", tview.Escape(h.SessionID))
	}
	if h.EventID != "" {
		fmt.Fprintf(b, "  event %s", tview.Escape(h.EventID))
	}
	b.WriteByte('\n')
	keys := make([]string, 0, len(h.Headers))
	for k := range h.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "  [gray]%s:[-] %s\n", tview.Escape(k), tview.Escape(h.Headers[k]))
	}
}

func writeBody(b *strings.Builder, body []byte, kind wire.Kind, raw, expand bool) {
	if !raw && kind.IsProtocol() {
		if p := prettyJSON(body, expand); p != "" {
			b.WriteString(p)
			b.WriteByte('\n')
			return
		}
	}
	b.WriteString(rawText(body, expand))
	b.WriteByte('\n')
}

// rawText shows the exact wire bytes with escapes visible.
func rawText(body []byte, expand bool) string {
	if !expand && len(body) > rawFoldBytes {
		note := fmt.Sprintf("[gray]… folded after %s of %s; press x to expand[-]\n", human.Size(rawFoldBytes), human.Size(int64(len(body))))
		return note + tview.Escape(printable(body[:rawFoldBytes])) + "\n" + note
	}
	return tview.Escape(printable(body))
}

func writePeer(b *strings.Builder, src capture.Source, r *capture.Record) {
	peer, err := src.Record(r.Peer)
	if err != nil {
		return
	}
	lat := r.Latency
	if lat == 0 {
		lat = peer.Latency
	}
	what := "response"
	if peer.Kind == wire.KindRequest {
		what = "request"
	}
	fmt.Fprintf(b, "\n[::b]── paired %s #%d, latency %s ──[::-]\n", what, peer.Seq, human.Duration(lat))
	if peer.Size > peerMaxBytes {
		fmt.Fprintf(b, "[gray](%s; p jumps to it)[-]\n", human.Size(peer.Size))
		return
	}
	body, err := src.Body(peer.Seq)
	if err != nil {
		return
	}
	writeBody(b, body, peer.Kind, false, false)
}
