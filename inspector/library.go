package inspector

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const pageLibrary = "library"

// library lists the captures of a directory, newest first, each grouped
// into its connections and ACP sessions once selected. Its fields belong
// to the UI goroutine; the watcher (libwatch.go) hands it new lists.
type library struct {
	a        *app
	dir      string
	tree     *tview.TreeView
	status   *tview.TextView
	root     *tview.Flex
	entries  []libEntry
	width    int             // the tree's inner width the lines were laid out for
	job      *job            // the grouping of the selected capture
	grouping *tview.TreeNode // the node job's result goes under
	watcher  *job
	kick     chan struct{} // asks the watcher to list now
	msg      string
}

// nodeRef returns what node stands for, nil for none.
func nodeRef(node *tview.TreeNode) *libRef {
	if node == nil {
		return nil
	}
	ref, _ := node.GetReference().(*libRef)
	return ref
}

// libRef is what a tree node stands for.
type libRef struct {
	info    *libEntry
	session string  // set on session nodes
	conn    *uint32 // set on connection nodes
	grouped bool    // children computed (or being computed)
}

func (a *app) showLibrary() {
	if a.lib == nil {
		a.lib = newLibrary(a, a.opts.Dir)
		a.pages.AddPage(pageLibrary, a.lib.root, true, false)
	}
	a.lib.watch()
	a.pages.SwitchToPage(pageLibrary)
	a.tv.SetFocus(a.lib.tree)
}

// closeCapture closes the open capture once its workers are stopped.
func (a *app) closeCapture() {
	cv := a.cv
	if cv == nil {
		return
	}
	a.cv = nil
	cv.close()
	a.pages.RemovePage(pageCapture)
	a.pages.RemovePage(pageStats)
	a.pages.RemovePage(pageConversation)
	a.pages.RemovePage(pageFindings)
	// The source is closed by a worker that first waits for the view's
	// workers, so a scan in flight never reads a closed store.
	src := cv.src
	jobs := []*job{cv.filterJob, cv.searchJob, cv.follower, cv.detailJb}
	if cv.convo != nil {
		jobs = append(jobs, cv.convo.job)
	}
	if cv.stats != nil {
		jobs = append(jobs, cv.stats.job)
	}
	a.start(func(*job) { // closer
		for _, j := range jobs {
			if j != nil {
				<-j.finished
			}
		}
		src.Close()
	})
}

func newLibrary(a *app, dir string) *library {
	l := &library{a: a, dir: dir, kick: make(chan struct{}, 1)}
	l.tree = tview.NewTreeView()
	l.tree.SetBorder(true).SetTitle(" captures in " + tview.Escape(dir) + " ")
	l.tree.SetRoot(tview.NewTreeNode("reading the captures…").SetSelectable(false))
	l.tree.SetChangedFunc(l.selected)
	l.tree.SetSelectedFunc(l.open)
	l.tree.SetInputCapture(l.keys)
	l.status = tview.NewTextView().SetDynamicColors(true)
	l.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(l.tree, 0, 1, true).
		AddItem(l.status, 1, 0, false)
	l.root.SetDrawFunc(func(screen tcell.Screen, x, y, w, h int) (int, int, int, int) {
		if _, _, width, _ := l.tree.GetInnerRect(); width != l.width {
			l.layout(width)
		}
		l.status.SetText(l.statusText())
		return x, y, w, h
	})
	return l
}

// statusText shows the keys and the selected capture's file, or the last
// message; the keys come first, so 80 columns cut the file's long name
// rather than them.
func (l *library) statusText() string {
	if l.msg != "" {
		return tview.Escape(l.msg)
	}
	hints := "[gray]Enter open  d delete  R reload  ? help  Q quit[-]"
	if ref := nodeRef(l.tree.GetCurrentNode()); ref != nil {
		return hints + "  [::b]" + esc(filepath.Base(ref.info.Path)) + "[::-]"
	}
	return hints
}

func (l *library) stopJobs() {
	l.stopGrouping()
	l.watcher.stop()
}

// watch starts the watcher, which lists the directory at once and keeps
// the list current while the library is shown.
func (l *library) watch() {
	l.watcher.stop()
	l.watcher = l.a.start(func(j *job) { l.watchDir(j, l.dir, l.kick) })
}

// reload asks the watcher to list the directory now (R, a delete).
func (l *library) reload() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// show replaces the list with entries, keeping the selection, and the
// connections and sessions of captures that did not change.
func (l *library) show(entries []libEntry, err error) {
	old := l.tree.GetRoot()
	cur := l.tree.GetCurrentNode()
	curRef := nodeRef(cur)
	curIndex := 0
	prev := map[string]*tview.TreeNode{}
	for i, n := range old.GetChildren() {
		if ref, _ := n.GetReference().(*libRef); ref != nil {
			prev[ref.info.Path] = n
			if curRef != nil && ref.info.Path == curRef.info.Path {
				curIndex = i
			}
		}
	}
	l.entries = entries
	root := tview.NewTreeNode("").SetSelectable(false)
	switch {
	case err != nil:
		l.msg = err.Error()
	case len(entries) == 0:
		root.AddChild(tview.NewTreeNode("no captures yet: record one with `acpscope -- AGENT CMD…` or `acpscope demo`").SetSelectable(false))
	}
	var sel *tview.TreeNode
	for i := range l.entries {
		e := &l.entries[i]
		node := tview.NewTreeNode("").SetReference(&libRef{info: e})
		if o := prev[e.Path]; o != nil {
			l.carryGroups(o, node)
		}
		root.AddChild(node)
		if curRef != nil && e.Path == curRef.info.Path {
			sel = node
			if within(node, cur) {
				sel = cur
			}
		}
	}
	l.tree.SetRoot(root)
	l.width = -1 // lay the new lines out at the next draw
	if sel == nil && len(l.entries) > 0 {
		sel = root.GetChildren()[min(curIndex, len(l.entries)-1)]
	}
	if sel != nil {
		l.tree.SetCurrentNode(sel)
		l.selected(sel)
	}
}

// carryGroups moves the connections and sessions found under o to node
// when they still hold: the capture did not change, or it is still being
// written (regrouping a live capture at every poll would reread it). A
// grouping under way is carried too, or stopped when its capture changed.
func (l *library) carryGroups(o, node *tview.TreeNode) {
	oref, ref := nodeRef(o), nodeRef(node)
	same := oref.info.signature() == ref.info.signature() || oref.info.Live && ref.info.Live
	if l.grouping == o {
		if !same {
			l.stopGrouping()
			return
		}
		l.grouping = node
		ref.grouped = true
		return
	}
	kids := o.GetChildren()
	if !same || !oref.grouped || len(kids) == 0 {
		return
	}
	ref.grouped = true
	for _, k := range kids {
		retarget(k, ref.info)
		node.AddChild(k)
	}
	node.SetExpanded(o.IsExpanded())
}

func retarget(n *tview.TreeNode, e *libEntry) {
	if ref, _ := n.GetReference().(*libRef); ref != nil {
		ref.info = e
	}
	for _, k := range n.GetChildren() {
		retarget(k, e)
	}
}

// within reports whether n is node or below it.
func within(node, n *tview.TreeNode) bool {
	if node == n {
		return true
	}
	for _, k := range node.GetChildren() {
		if within(k, n) {
			return true
		}
	}
	return false
}

// layout writes the header and every capture's line for width cells.
func (l *library) layout(width int) {
	l.width = width
	if len(l.entries) == 0 {
		return
	}
	cols := layoutCols(l.entries, width)
	now := time.Now()
	root := l.tree.GetRoot()
	root.SetText(libHeader(cols))
	for _, n := range root.GetChildren() {
		if ref, _ := n.GetReference().(*libRef); ref != nil {
			n.SetText(captureLine(ref.info, cols, now))
		}
	}
}

// connsOf returns the connection nodes listed under a capture.
func (l *library) connsOf(info *libEntry) []*tview.TreeNode {
	for _, n := range l.tree.GetRoot().GetChildren() {
		if ref, _ := n.GetReference().(*libRef); ref != nil && ref.info == info {
			return n.GetChildren()
		}
	}
	return nil
}

// open opens the capture a node belongs to; a session node filters to it.
func (l *library) open(node *tview.TreeNode) {
	ref, _ := node.GetReference().(*libRef)
	if ref == nil {
		return
	}
	if ref.info.Err != nil {
		l.msg = "cannot open: " + ref.info.Err.Error()
		return
	}
	src, err := capture.OpenSource(ref.info.Path)
	if err != nil {
		l.msg = fmt.Sprintf("opening %s: %v", filepath.Base(ref.info.Path), err)
		return
	}
	l.msg = ""
	l.watcher.stop() // the list is not shown while a capture is
	filter := ""
	switch {
	case ref.session != "":
		filter = "session:" + quoteSession(ref.session)
	case ref.conn != nil && len(l.connsOf(ref.info)) > 1:
		filter = fmt.Sprintf("conn:%d", *ref.conn)
	}
	l.a.showCapture(ref.info.Path, src, filter)
}

func quoteSession(id string) string {
	if strings.ContainsAny(id, " \t\"()") || id == "" {
		return `"` + strings.ReplaceAll(strings.ReplaceAll(id, `\`, `\\`), `"`, `\"`) + `"`
	}
	return id
}

func (l *library) keys(ev *tcell.EventKey) *tcell.EventKey {
	l.msg = ""
	switch {
	case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		l.a.quit()
	case ev.Key() == tcell.KeyHome || ev.Key() == tcell.KeyRune && ev.Rune() == 'g':
		l.selectEdge(false)
	case ev.Key() == tcell.KeyEnd || ev.Key() == tcell.KeyRune && ev.Rune() == 'G':
		l.selectEdge(true)
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'd':
		l.askDelete()
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'R':
		l.reload()
	case ev.Key() == tcell.KeyRune && ev.Rune() == '?':
		l.a.showHelp()
	default:
		return ev
	}
	return nil
}

// selectEdge selects the first or the last node shown (tview's Home and
// End only scroll a tree).
func (l *library) selectEdge(last bool) {
	kids := l.tree.GetRoot().GetChildren()
	if len(kids) == 0 || kids[0].GetReference() == nil {
		return
	}
	node := kids[0]
	if last {
		node = kids[len(kids)-1]
		for node.IsExpanded() && len(node.GetChildren()) > 0 {
			node = node.GetChildren()[len(node.GetChildren())-1]
		}
	}
	l.tree.SetCurrentNode(node)
	l.selected(node)
}

// askDelete asks before deleting the selected capture; live captures are
// refused (their proxy is still writing).
func (l *library) askDelete() {
	ref := nodeRef(l.tree.GetCurrentNode())
	if ref == nil || ref.session != "" || ref.conn != nil {
		l.msg = "select a capture to delete"
		return
	}
	if ref.info.Live {
		l.msg = "this capture is live: its proxy is still writing it; delete it once the agent exits"
		return
	}
	path := ref.info.Path
	modal := tview.NewModal().
		SetText(fmt.Sprintf("Delete %s (%s)? This cannot be undone.", filepath.Base(path), human.Size(ref.info.Size))).
		AddButtons([]string{"Cancel", "Delete"}).
		SetDoneFunc(func(_ int, label string) {
			l.a.pages.RemovePage(pageModal)
			l.a.tv.SetFocus(l.tree)
			if label != "Delete" {
				l.msg = "kept " + filepath.Base(path)
				return
			}
			if err := os.Remove(path); err != nil {
				l.msg = "deleting: " + err.Error()
				return
			}
			l.reload()
			l.msg = "deleted " + filepath.Base(path)
		})
	l.a.pages.AddPage(pageModal, modal, true, true)
	l.a.tv.SetFocus(modal)
}
