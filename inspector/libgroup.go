package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/acpscope/acpscope/capture"
	"github.com/rivo/tview"
)

// This file groups a capture of the library into its connections and ACP
// sessions, on a worker, when it is first selected.

// selected starts grouping the selected capture, unless it is grouped or
// being grouped. Only one capture is grouped at a time: moving on stops
// the last one's grouping, which starts again when it is selected again.
func (l *library) selected(node *tview.TreeNode) {
	ref := nodeRef(node)
	if ref == nil || ref.session != "" || ref.conn != nil || ref.grouped || ref.info.Err != nil {
		return
	}
	l.stopGrouping()
	ref.grouped = true
	l.grouping = node
	path := ref.info.Path
	l.job = l.a.start(func(j *job) { // library grouper
		groups, err := groupCapture(j, path)
		if j.stopped() {
			return
		}
		j.post(func() { l.addGroups(groups, err) })
	})
}

// stopGrouping stops a grouping whose result has not arrived; its capture
// is grouped again when selected again.
func (l *library) stopGrouping() {
	if l.grouping != nil {
		nodeRef(l.grouping).grouped = false
		l.grouping = nil
	}
	l.job.stop()
}

// addGroups puts the grouper's result under the node now standing for its
// capture (the list may have been rebuilt since it started).
func (l *library) addGroups(groups []*connGroup, err error) {
	node := l.grouping
	l.grouping = nil
	if node == nil {
		return
	}
	ref := nodeRef(node)
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
