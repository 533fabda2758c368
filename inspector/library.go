package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const pageLibrary = "library"

// library lists the captures of a directory, newest first, each grouped
// into its connections and ACP sessions once selected.
type library struct {
	a      *app
	dir    string
	tree   *tview.TreeView
	status *tview.TextView
	root   *tview.Flex
	infos  []capture.Info
	job    *job // the grouping of the selected capture
	msg    string
}

// libRef is what a tree node stands for.
type libRef struct {
	info    *capture.Info
	session string  // set on session nodes
	conn    *uint32 // set on connection nodes
	grouped bool    // children computed (or being computed)
}

func (a *app) showLibrary() {
	if a.lib == nil {
		a.lib = newLibrary(a, a.opts.Dir)
		a.pages.AddPage(pageLibrary, a.lib.root, true, false)
	}
	a.lib.reload()
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
	l := &library{a: a, dir: dir}
	l.tree = tview.NewTreeView()
	l.tree.SetBorder(true).SetTitle(" captures in " + tview.Escape(dir) + " ")
	l.tree.SetChangedFunc(l.selected)
	l.tree.SetSelectedFunc(l.open)
	l.tree.SetInputCapture(l.keys)
	l.status = tview.NewTextView().SetDynamicColors(true)
	l.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(l.tree, 0, 1, true).
		AddItem(l.status, 1, 0, false)
	l.root.SetDrawFunc(func(screen tcell.Screen, x, y, w, h int) (int, int, int, int) {
		if l.msg != "" {
			l.status.SetText(tview.Escape(l.msg))
		} else {
			l.status.SetText("[gray]Enter open  d delete  R reload  ? help  Q quit[-]")
		}
		return x, y, w, h
	})
	return l
}

func (l *library) stopJobs() { l.job.stop() }

// reload lists the directory again.
func (l *library) reload() {
	l.job.stop()
	infos, err := capture.List(l.dir)
	root := tview.NewTreeNode(tview.Escape(l.dir)).SetSelectable(false)
	l.tree.SetRoot(root)
	l.infos = infos
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		l.msg = "listing captures: " + err.Error()
	case len(infos) == 0:
		root.AddChild(tview.NewTreeNode("no captures yet: record one with `acpscope -- AGENT CMD…` or `acpscope demo`").SetSelectable(false))
	}
	for i := range infos {
		info := &l.infos[i]
		node := tview.NewTreeNode(captureLine(info)).SetReference(&libRef{info: info})
		root.AddChild(node)
	}
	if kids := root.GetChildren(); len(kids) > 0 && kids[0].GetReference() != nil {
		l.tree.SetCurrentNode(kids[0])
		l.selected(kids[0])
	}
}

// captureLine is one capture in the list.
func captureLine(in *capture.Info) string {
	name := filepath.Base(in.Path)
	if in.Err != nil {
		return fmt.Sprintf("%s  [red]unreadable: %s[-]", tview.Escape(name), tview.Escape(in.Err.Error()))
	}
	m := in.Meta
	agent := m.Agent
	if agent == "" {
		agent = "?"
	}
	dur := "-"
	switch {
	case !m.End.IsZero():
		dur = human.Duration(m.End.Sub(m.Start))
	case in.Live:
		dur = human.Duration(time.Since(m.Start)) + "…"
	}
	s := fmt.Sprintf("%s  [::b]%-12s[::-] %8s %7d msgs %10s  %s",
		m.Start.Local().Format("2006-01-02 15:04:05"), tview.Escape(agent), dur, in.Messages, human.Size(in.Size), liveMarker(in.Live, m))
	if in.Findings > 0 {
		s += fmt.Sprintf("  [yellow]lint %d[-]", in.Findings)
	}
	if m.Loss.Messages > 0 || m.Loss.Bytes > 0 {
		s += fmt.Sprintf("  [red]lost %d msgs[-]", m.Loss.Messages)
	}
	return s
}

// selected groups the selected capture into connections and sessions, on
// a worker, the first time it is selected.
func (l *library) selected(node *tview.TreeNode) {
	ref, _ := node.GetReference().(*libRef)
	if ref == nil || ref.session != "" || ref.grouped || ref.info.Err != nil {
		return
	}
	ref.grouped = true
	l.job.stop()
	path := ref.info.Path
	l.job = l.a.start(func(j *job) { // library grouper
		groups, err := groupCapture(j, path)
		if j.stopped() {
			return
		}
		j.post(func() { l.addGroups(node, ref, groups, err) })
	})
}

// connGroup is one connection of a capture and its sessions.
type connGroup struct {
	conn     uint32
	messages int
	sessions []*sessionGroup
}

type sessionGroup struct {
	id       string
	title    string
	messages int
}

func groupCapture(j *job, path string) ([]*connGroup, error) {
	src, err := capture.OpenSource(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	conns := map[uint32]*connGroup{}
	sessions := map[string]*sessionGroup{}
	// Titles come from session_info_update; the filter reads the store
	// segment by segment, and only matching bodies are read again.
	titles, _ := capture.ParseFilter("update:session_info_update")
	err = capture.ScanMatches(src, titles, 1, 0, func(r *capture.Record, isTitle bool) bool {
		if r.Seq%1024 == 0 && j.stopped() {
			return false
		}
		c := conns[r.Conn]
		if c == nil {
			c = &connGroup{conn: r.Conn}
			conns[r.Conn] = c
		}
		c.messages++
		if r.Session == "" {
			return true
		}
		s := sessions[r.Session]
		if s == nil {
			s = &sessionGroup{id: r.Session}
			sessions[r.Session] = s
			c.sessions = append(c.sessions, s)
		}
		s.messages++
		if isTitle {
			if title := sessionTitle(src, r.Seq); title != "" {
				s.title = title
			}
		}
		return true
	})
	out := make([]*connGroup, 0, len(conns))
	for _, c := range conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].conn < out[k].conn })
	return out, err
}

// sessionTitle returns the title a session_info_update carries.
func sessionTitle(src capture.Source, seq uint64) string {
	body, err := src.Body(seq)
	if err != nil {
		return ""
	}
	var m struct {
		Params struct {
			Update struct {
				Title string `json:"title"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &m) != nil {
		return ""
	}
	return m.Params.Update.Title
}

func (l *library) addGroups(node *tview.TreeNode, ref *libRef, groups []*connGroup, err error) {
	if err != nil {
		node.AddChild(tview.NewTreeNode("[red]" + tview.Escape(err.Error()) + "[-]").SetSelectable(false))
		return
	}
	for _, c := range groups {
		conn := c.conn
		cn := tview.NewTreeNode(fmt.Sprintf("connection %d  %d msgs", c.conn, c.messages)).
			SetReference(&libRef{info: ref.info, conn: &conn, grouped: true})
		for _, s := range c.sessions {
			text := "session " + tview.Escape(s.id)
			if s.title != "" {
				text += "  [::b]" + tview.Escape(s.title) + "[::-]"
			}
			text += fmt.Sprintf("  %d msgs", s.messages)
			cn.AddChild(tview.NewTreeNode(text).SetReference(&libRef{info: ref.info, session: s.id, grouped: true}))
		}
		node.AddChild(cn)
	}
}

// connsOf returns the connection nodes listed under a capture.
func (l *library) connsOf(info *capture.Info) []*tview.TreeNode {
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
	node := l.tree.GetCurrentNode()
	ref, _ := node.GetReference().(*libRef)
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
