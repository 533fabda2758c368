package inspector

import (
	"fmt"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Held messages show in the message table too, as mitmproxy shows
// intercepted flows in its list: after the recorded rows, one orange row
// each, in the order they were held. They are not records yet (a message
// is recorded when it is released, as what happened to it), so they have
// no sequence number; Enter on one opens the held list at it.

// heldRow is a held message as the table shows it.
type heldRow struct {
	view fault.HeldView
	ri   rowInfo
}

// setHeld replaces the held rows with what the proxy holds now.
func (m *rowModel) setHeld(held []fault.HeldView) {
	m.held = m.held[:0]
	for _, h := range held {
		c := wire.Classify([]byte(h.Message))
		dir := wire.DirClient
		if h.Dir == wire.DirAgent.String() {
			dir = wire.DirAgent
		}
		rec := capture.Record{Msg: protocol.Msg{Time: h.Arrived, Dir: dir, Kind: c.Kind, ID: c.ID,
			Method: c.Method, Session: c.SessionID, Conn: h.Conn}, Size: int64(len(h.Message))}
		m.held = append(m.held, heldRow{view: h, ri: rowInfo{rec: rec}})
	}
}

// heldAt returns the held message on row i (0-based, header excluded),
// nil when row i is a record.
func (m *rowModel) heldAt(i int) *fault.HeldView {
	if k := i - m.total; k >= 0 && k < len(m.held) {
		return &m.held[k].view
	}
	return nil
}

// heldCell is one cell of a held row: the record columns it has, in the
// colour of holds, "⏸" in the mark column and its hold number for a
// sequence.
func (m *rowModel) heldCell(c column, h *heldRow) *tview.TableCell {
	cell := m.cell(c, &h.ri, nil)
	switch c.name {
	case "mark":
		cell.SetText("⏸")
	case "seq":
		cell.SetText(fmt.Sprintf("held %d", h.view.ID))
	}
	return cell.SetTextColor(colorMark).SetAttributes(tcell.AttrBold)
}

// showHeldDetail shows a held row's message in the detail pane.
func (cv *captureView) showHeldDetail(h *fault.HeldView) {
	cv.detailOf = 0
	cv.detail.SetTitle(fmt.Sprintf(" held #%d %s — Enter or h: forward, edit or drop ", h.ID, esc(heldSummary(h))))
	cv.detail.SetText(esc(pretty(h.Message))).ScrollToBeginning()
}
