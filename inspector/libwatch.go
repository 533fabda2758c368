package inspector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// This file keeps the library's list current: a watcher lists the
// directory now and then, off the UI goroutine, so captures that start,
// finish, die or are deleted show without R.

// libraryPoll is how often the library looks at its directory. A poll
// stats every file but opens only those that changed (and live ones, whose
// writer may have died without touching the file).
const libraryPoll = 2 * time.Second

// libEntry is one capture of the library.
type libEntry struct {
	capture.Info
	// last is an unclean capture's last record time: the best end it has.
	last time.Time
	// mod and size are the file's when it was read, to tell a change.
	mod  time.Time
	size int64
}

// unclean reports a capture whose writer is gone without closing it: no
// end time, and no proxy serving it (SIGKILL, a crash, a power cut).
func (e *libEntry) unclean() bool {
	return e.Err == nil && !e.Live && e.Meta.End.IsZero()
}

// signature is what the list shows of e, to post only changes.
func (e *libEntry) signature() string {
	exit := ""
	if x := e.Meta.Exit; x != nil {
		exit = fmt.Sprint(x.Code, x.Signal, x.Error)
	}
	return fmt.Sprint(e.Path, e.size, e.mod.UnixNano(), e.Live, e.Messages, e.Meta.End.UnixNano(), exit,
		e.Findings, e.Err != nil, e.Meta.Loss.Messages, e.Meta.Agent)
}

// watchDir is the library watcher goroutine. Owned by the library, it
// lists the directory at once, then every libraryPoll or when kicked (R,
// a delete), and posts the list when it changed, or always when kicked.
// It ends when its job stops or the app quits.
func (l *library) watchDir(j *job, dir string, kick <-chan struct{}) {
	tick := time.NewTicker(libraryPoll)
	defer tick.Stop()
	cache := map[string]libEntry{}
	shown, force := "", true
	for {
		entries, err := listDir(dir, cache)
		var sig strings.Builder
		live := false
		for i := range entries {
			sig.WriteString(entries[i].signature() + "\n")
			live = live || entries[i].Live
		}
		if err != nil {
			sig.WriteString(err.Error())
		}
		// A live capture's duration grows, so its line is posted anew.
		if force || live || sig.String() != shown {
			shown = sig.String()
			j.post(func() { l.show(entries, err) })
		}
		if j.stopped() {
			return
		}
		select {
		case <-j.stopc:
			return
		case <-j.app.done:
			return
		case <-kick:
			force = true
		case <-tick.C:
			force = false
		}
	}
}

// listDir lists the captures in dir, newest first, reading again only
// the files that changed since cache saw them, or that were live or
// unreadable. cache is updated in place.
func listDir(dir string, cache map[string]libEntry) ([]libEntry, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		clear(cache)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing captures in %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var out []libEntry
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), capture.Ext) {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue // deleted while listing
		}
		path := filepath.Join(dir, de.Name())
		seen[path] = true
		e, ok := cache[path]
		if !ok || e.Live || e.Err != nil || e.size != fi.Size() || !e.mod.Equal(fi.ModTime()) {
			e = readEntry(path, fi)
			cache[path] = e
		}
		out = append(out, e)
	}
	for path := range cache {
		if !seen[path] {
			delete(cache, path)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Meta.Start.After(out[j].Meta.Start) })
	return out, nil
}

func readEntry(path string, fi os.FileInfo) libEntry {
	e := libEntry{Info: capture.Stat(path), mod: fi.ModTime(), size: fi.Size()}
	if e.unclean() && e.Messages > 0 {
		if r, err := capture.Open(path); err == nil {
			if rec, err := r.Record(r.Last()); err == nil {
				e.last = rec.When()
			}
			r.Close()
		}
	}
	return e
}
