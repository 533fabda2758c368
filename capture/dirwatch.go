package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DirWatcher hands out the captures that appear in a directory, one at a
// time, so that a follower can carry on when an editor restarts its
// agent (tail -F). It polls: captures are files, and a poll of a
// directory is cheap next to the lifetime of an agent.
//
// A DirWatcher is used by one goroutine; it starts none.
type DirWatcher struct {
	dir   string
	match func(Info) bool
	seen  map[string]bool
	// unreadable holds new files that could not be read yet, and when
	// they were first seen: a proxy creating a capture writes its header
	// a moment after the file appears.
	unreadable map[string]time.Time
}

// Poll timing of a DirWatcher.
const (
	watchEvery = 200 * time.Millisecond
	// watchUnreadable is how long a new file may stay unreadable before
	// the watcher stops looking at it.
	watchUnreadable = 30 * time.Second
)

// NewDirWatcher watches dir for captures that match (nil matches all).
// Those already there are not new: Next never returns them.
func NewDirWatcher(dir string, match func(Info) bool) (*DirWatcher, error) {
	w := &DirWatcher{dir: dir, match: match, seen: map[string]bool{}, unreadable: map[string]time.Time{}}
	names, err := w.names()
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		w.seen[n] = true
	}
	return w, nil
}

// Skip marks a capture as handed out already (the one a follower picked
// itself before asking for the next).
func (w *DirWatcher) Skip(path string) { w.seen[filepath.Base(path)] = true }

// Next waits for a capture that appeared since the watcher started, was
// not handed out yet and matches, and returns it, the earliest started
// first. It may be live or, when its agent came and went between two
// looks, finished already. It returns ctx.Err() when ctx is done.
func (w *DirWatcher) Next(ctx context.Context) (Info, error) {
	for {
		if in, ok, err := w.poll(); err != nil || ok {
			return in, err
		}
		select {
		case <-ctx.Done():
			return Info{}, ctx.Err()
		case <-time.After(watchEvery):
		}
	}
}

// poll looks at the new files once.
func (w *DirWatcher) poll() (Info, bool, error) {
	names, err := w.names()
	if err != nil {
		return Info{}, false, err
	}
	var found []Info
	for _, n := range names {
		if w.seen[n] {
			continue
		}
		in := Stat(filepath.Join(w.dir, n))
		if in.Err != nil {
			first, ok := w.unreadable[n]
			if !ok {
				w.unreadable[n] = time.Now()
			} else if time.Since(first) > watchUnreadable {
				w.seen[n] = true
				delete(w.unreadable, n)
			}
			continue
		}
		delete(w.unreadable, n)
		if w.match != nil && !w.match(in) {
			w.seen[n] = true
			continue
		}
		found = append(found, in)
	}
	if len(found) == 0 {
		return Info{}, false, nil
	}
	first := slices.MinFunc(found, func(a, b Info) int { return a.Meta.Start.Compare(b.Meta.Start) })
	w.seen[filepath.Base(first.Path)] = true
	return first, true, nil
}

// names lists the capture files in the directory; a directory not made
// yet holds none.
func (w *DirWatcher) names() ([]string, error) {
	entries, err := os.ReadDir(w.dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// openNewWait bounds how long OpenWhenReady waits for a capture that has
// just appeared to become readable.
const openNewWait = 30 * time.Second

// OpenWhenReady opens a capture as OpenSource does, waiting for one that
// has just appeared: its proxy writes the header and opens the feed a
// moment after creating the file. It gives up after a while, or when ctx
// is done.
func OpenWhenReady(ctx context.Context, path string) (Source, error) {
	deadline := time.Now().Add(openNewWait)
	for {
		src, err := OpenSource(path)
		notYet := errors.Is(err, ErrLive) || errors.Is(err, ErrCorrupt)
		if err == nil || !notYet || time.Now().After(deadline) {
			return src, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(watchEvery / 2):
		}
	}
}
