package inspector

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const pageCapture = "capture"

// captureView shows one capture: the title line, the message table, the
// detail pane, the filter/search bar and the status line. It belongs to
// the UI goroutine.
type captureView struct {
	a    *app
	path string
	src  capture.Source
	live bool // read through a running proxy's feed
	meta capture.Meta

	rows   *rowModel
	table  *tview.Table
	detail *tview.TextView
	title  *tview.TextView
	state  *tview.TextView   // the status bar: mode, filter, search, follow
	status *tview.TextView   // messages and key hints
	bar    *tview.InputField // shown in the status bar's place while typing
	body   *tview.Flex
	root   *tview.Flex

	barMode    string // "", "filter", "search" or "goto"
	filter     *capture.Filter
	filterJob  *job
	filtering  string // progress shown while a filter runs
	search     *search
	searchJob  *job
	markedOnly bool

	follow   bool
	follower *job
	decoJob  *job // reads the bodies behind the table's rows
	newBelow int  // rows that arrived while the view did not scroll to them

	findings    []protocol.Finding // nil: never linted
	findingsErr error

	raw    bool // detail shows the raw bytes
	expand bool // detail shows folded parts
	zoom   bool // detail fills the body
	// detailFocus tracks the detail pane's focus: the status bar is drawn
	// while tview holds the lock Application.GetFocus takes.
	detailFocus bool
	message     string
	detailOf    uint64 // the sequence the detail pane shows
	detailJb    *job

	convo *conversation
	stats *statsView
	// ctl is the link to a live capture's proxy for intercept and send,
	// nil until the user asks for one of them.
	ctl *control
}

// showCapture opens src in the capture view; filter, when set, is applied
// at once (the library opens a session that way).
func (a *app) showCapture(path string, src capture.Source, filter string) {
	a.closeCapture()
	cv := newCaptureView(a, path, src)
	a.cv = cv
	a.pages.AddAndSwitchToPage(pageCapture, cv.root, true)
	a.tv.SetFocus(cv.table)
	if filter != "" {
		cv.bar.SetText(filter)
		cv.applyFilter(filter)
	}
}

func newCaptureView(a *app, path string, src capture.Source) *captureView {
	cv := &captureView{a: a, path: path, src: src, meta: src.Meta(), rows: newRowModel(src)}
	_, cv.live = src.(liveSource)
	deco := newDecorator()
	cv.rows.askDeco = deco.want
	cv.decoJob = a.start(func(j *job) { deco.run(j, src, cv.rows.decorated) })
	cv.loadFindings()

	cv.table = tview.NewTable().SetContent(cv.rows).SetFixed(1, 0).SetSelectable(true, false)
	cv.table.SetSelectedStyle(tcell.StyleDefault.Background(tcell.ColorDarkSlateGray).Foreground(tcell.ColorWhite))
	cv.table.Select(1, 0)
	cv.table.SetInputCapture(cv.tableKeys)

	cv.detail = tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetScrollable(true)
	cv.detail.SetBorder(true).SetBorderColor(tcell.ColorGray).SetTitleAlign(tview.AlignLeft)
	cv.detail.SetInputCapture(cv.detailKeys)
	cv.detail.SetFocusFunc(func() { cv.detailFocus = true })
	cv.detail.SetBlurFunc(func() { cv.detailFocus = false })
	cv.table.SetSelectionChangedFunc(func(row, _ int) { cv.showDetail() })

	cv.title = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	cv.title.SetBackgroundColor(tcell.ColorNavy)
	cv.state = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	cv.state.SetBackgroundColor(tcell.ColorNavy)
	cv.status = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	cv.bar = tview.NewInputField().SetLabel("filter: ").SetFieldBackgroundColor(tcell.ColorBlack)
	cv.bar.SetChangedFunc(cv.barChanged)
	cv.bar.SetDoneFunc(cv.barDone)
	cv.bar.SetInputCapture(cv.barKeys)

	cv.body = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(cv.table, 0, 3, true).
		AddItem(cv.detail, 0, 2, false)
	cv.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(cv.title, 1, 0, false).
		AddItem(cv.body, 0, 1, true).
		AddItem(cv.bar, 0, 0, false).
		AddItem(cv.state, 1, 0, false).
		AddItem(cv.status, 1, 0, false)
	cv.root.SetDrawFunc(func(screen tcell.Screen, x, y, w, h int) (int, int, int, int) {
		cv.refreshChrome()
		return x, y, w, h
	})
	if live, ok := src.(liveSource); ok {
		// Traffic scrolls in from the bottom, as in tail -f.
		cv.follow = true
		cv.toEnd()
		cv.follower = a.start(func(j *job) { cv.followLive(j, live) })
	}
	cv.showDetail()
	return cv
}

func (cv *captureView) loadFindings() {
	fs, err := cv.src.Findings()
	cv.findings, cv.findingsErr = fs, err
	if err != nil {
		cv.message = "lint findings unreadable: " + err.Error()
		return
	}
	for _, f := range fs {
		sev := f.Severity.String()
		for _, seq := range f.Seqs {
			if severityRank[sev] > severityRank[cv.rows.findings[seq]] {
				cv.rows.findings[seq] = sev
			}
		}
	}
}

// close stops the view's workers; the caller closes the source after the
// workers are gone.
func (cv *captureView) close() {
	cv.closeControl() // the proxy forwards unchanged whatever was held
	cv.filterJob.stop()
	cv.searchJob.stop()
	cv.follower.stop()
	cv.decoJob.stop()
	cv.detailJb.stop()
	if cv.convo != nil {
		cv.convo.job.stop()
	}
	if cv.stats != nil {
		cv.stats.job.stop()
	}
}

// selected returns the selected row index (0-based, header excluded).
func (cv *captureView) selected() int {
	row, _ := cv.table.GetSelection()
	return row - 1
}

func (cv *captureView) selectIndex(i int) {
	if last := cv.rows.total + len(cv.rows.held) - 1; i > last {
		i = last
	}
	if i < 0 {
		i = 0
	}
	cv.table.Select(i+1, 0)
}

// selectSeq selects the row of seq, leaving a filter that hides it.
func (cv *captureView) selectSeq(seq uint64) {
	i, ok := cv.rows.indexOf(seq)
	if !ok && (cv.filter != nil || cv.markedOnly) {
		cv.clearFilter()
		i, ok = cv.rows.indexOf(seq)
	}
	if !ok {
		cv.message = fmt.Sprintf("message #%d is not in this capture", seq)
	}
	cv.selectIndex(i)
}

// refreshChrome redraws the title and status lines; it runs before each
// draw of the view.
func (cv *captureView) refreshChrome() {
	// The file's long name goes last: at 80 columns it is what is cut,
	// not the agent, the state or the counts.
	var t strings.Builder
	name := "(capture)"
	if cv.path != "" {
		name = filepath.Base(cv.path)
	}
	if cv.meta.Agent != "" {
		fmt.Fprintf(&t, " [::b]%s[::-] ", tview.Escape(cv.meta.Agent))
	}
	t.WriteString(" " + liveMarker(cv.live, cv.meta))
	fmt.Fprintf(&t, "  %d msgs", cv.src.Last())
	if cv.filter != nil || cv.markedOnly {
		fmt.Fprintf(&t, "  [yellow]%d shown[-]", cv.rows.total)
	}
	fmt.Fprintf(&t, "  [gray]%s[-]", tview.Escape(name))
	cv.title.SetText(t.String())
	_, _, width, _ := cv.table.GetInnerRect()
	cv.rows.fitMethod(width)
	if cv.selected() >= cv.rows.total-1 {
		cv.newBelow = 0
	}
	_, _, width, _ = cv.root.GetRect()
	cv.state.SetText(cv.stateText(width))

	switch {
	case cv.filtering != "":
		cv.status.SetText("[yellow]" + cv.filtering + "[-]")
	case cv.message != "":
		cv.status.SetText(tview.Escape(cv.message))
	case cv.rows.err != nil:
		cv.status.SetText("[red]" + tview.Escape(cv.rows.err.Error()) + "[-]")
	default:
		cv.status.SetText("[gray]" + cv.hints() + "[-]")
	}
}

// liveMarker tells whether a proxy is still writing the capture, or how
// its agent ended.
func liveMarker(live bool, m capture.Meta) string {
	switch {
	case live && m.End.IsZero():
		return "[green]● live[-]"
	case m.Exit != nil && m.Exit.Code != 0:
		s := fmt.Sprintf("[red]exit %d", m.Exit.Code)
		if m.Exit.Signal != "" {
			s += " " + m.Exit.Signal
		}
		return s + "[-]"
	case m.Exit != nil:
		return "finished, exit 0"
	case !live && m.End.IsZero():
		// No end time and no writer: the proxy was killed (or the
		// machine went down) before it could close the capture.
		return "[orange]unclean[-]"
	}
	return "finished"
}
