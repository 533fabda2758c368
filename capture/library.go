package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/protocol"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrAmbiguous: a name that matches several captures.
var ErrAmbiguous = errors.New("ambiguous capture name")

// Ext is the file name extension of captures.
const Ext = ".acpscope"

// Info is one capture in a listing.
type Info struct {
	Path string
	Meta Meta
	Live bool
	Size int64
	// Messages is how many records the capture holds (of a live one, as
	// many as its last sequence number says); Last is that number, which
	// is larger when commits failed and left holes.
	Messages uint64
	Last     uint64
	// LastTime is when the last record arrived (finished captures only).
	LastTime time.Time
	Findings int   // stored lint findings; -1 when never linted
	Err      error // set when the file could not be read; listed anyway
}

// Unclean reports a capture its proxy never finished: not live, yet
// without an end (the proxy was killed, or the machine went down). It
// holds what was committed before that.
func (in Info) Unclean() bool {
	return !in.Live && in.Err == nil && in.Meta.End.IsZero()
}

// DefaultDir returns the capture directory: $ACPSCOPE_DIR, else
// ${XDG_STATE_HOME:-~/.local/state}/acpscope/captures. It is created
// (0700) if missing.
func DefaultDir() (string, error) {
	dir := os.Getenv("ACPSCOPE_DIR")
	if dir == "" {
		state := os.Getenv("XDG_STATE_HOME")
		if state == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("finding the capture directory: %w; set ACPSCOPE_DIR", err)
			}
			state = filepath.Join(home, ".local", "state")
		}
		dir = filepath.Join(state, "acpscope", "captures")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the capture directory: %w; set ACPSCOPE_DIR to a writable directory", err)
	}
	return dir, nil
}

var (
	unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	dashes     = regexp.MustCompile(`--+`)
)

// NewName returns a capture file name for an agent started now:
// UTC start time, agent name and pid, e.g.
// 20261121T123456Z-claude-code-acp-12345.acpscope.
func NewName(agent string, start time.Time, pid int) string {
	name := dashes.ReplaceAllString(unsafeName.ReplaceAllString(filepath.Base(agent), "-"), "-")
	name = strings.Trim(name, "-.")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "agent"
	}
	return start.UTC().Format("20060102T150405Z") + "-" + name + "-" + strconv.Itoa(pid) + Ext
}

// nameInfo recovers what NewName put in a file name, for live captures
// whose metadata cannot be read.
func nameInfo(path string) Meta {
	base := strings.TrimSuffix(filepath.Base(path), Ext)
	var m Meta
	stamp, rest, ok := strings.Cut(base, "-")
	if !ok {
		return m
	}
	if t, err := time.Parse("20060102T150405Z", stamp); err == nil {
		m.Start = t
	}
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		m.Agent = rest[:i]
		m.Pid, _ = strconv.Atoi(rest[i+1:])
	}
	return m
}

// List returns the captures in dir, newest first, reading no payloads.
// Files that cannot be read are listed with Err set. Stale feed sockets
// left by crashed proxies are removed on the way.
func List(dir string) ([]Info, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing captures in %s: %w", dir, err)
	}
	var infos []Info
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		infos = append(infos, Stat(filepath.Join(dir, e.Name())))
	}
	sort.SliceStable(infos, func(i, j int) bool {
		return infos[i].Meta.Start.After(infos[j].Meta.Start)
	})
	return infos, nil
}

// Stat describes one capture as List does.
func Stat(path string) Info {
	in := Info{Path: path, Findings: -1}
	if fi, err := os.Stat(path); err == nil {
		in.Size = fi.Size()
	}
	if m, last, ok := peekLive(path); ok {
		in.Live, in.Meta, in.Messages, in.Last = true, m, last, last
		return in
	}
	r, err := Open(path)
	if errors.Is(err, ErrLive) {
		in.Live, in.Meta = true, nameInfo(path)
		return in
	}
	if err != nil {
		in.Err = err
		in.Meta = nameInfo(path)
		return in
	}
	defer r.Close()
	in.Meta, in.Last = r.Meta(), r.Last()
	if in.Messages, err = r.Count(); err != nil {
		in.Err = err
		return in
	}
	if in.LastTime, err = r.LastTime(); err != nil {
		in.Err = err
		return in
	}
	if fs, err := r.Findings(); err == nil && fs != nil {
		in.Findings = len(fs)
	}
	return in
}

// Resolve turns what a user typed (a path, a file name in the capture
// directory, a unique prefix or substring of one, or "latest"/"last",
// the newest capture that can be read) into a capture path.
func Resolve(dir, name string) (string, error) {
	if name == "" || name == "latest" || name == "last" {
		infos, err := List(dir)
		if err != nil {
			return "", err
		}
		if len(infos) == 0 {
			return "", fmt.Errorf("%w: there are no captures in %s yet", ErrNotFound, dir)
		}
		// One unreadable file (a crash mid-create, a copy gone wrong)
		// must not hide every capture behind it; ls lists it.
		for _, in := range infos {
			if in.Err == nil {
				return in.Path, nil
			}
		}
		return "", fmt.Errorf("%w; no capture in %s can be read (`acpscope ls` lists them)", infos[0].Err, dir)
	}
	if fi, err := os.Stat(name); err == nil && !fi.IsDir() {
		return name, nil
	}
	if strings.ContainsRune(name, os.PathSeparator) {
		return "", fmt.Errorf("%w: %s does not exist", ErrNotFound, name)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %q (reading %s: %v)", ErrNotFound, name, dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			names = append(names, e.Name())
		}
	}
	for _, match := range []func(string) bool{
		func(n string) bool { return n == name || n == name+Ext },
		func(n string) bool { return strings.HasPrefix(n, name) },
		func(n string) bool { return strings.Contains(n, name) },
	} {
		var found []string
		for _, n := range names {
			if match(n) {
				found = append(found, n)
			}
		}
		switch {
		case len(found) == 1:
			return filepath.Join(dir, found[0]), nil
		case len(found) > 1:
			sort.Sort(sort.Reverse(sort.StringSlice(found)))
			if len(found) > 10 {
				found = append(found[:10], "…")
			}
			return "", fmt.Errorf("%w: %q matches %d captures in %s:\n  %s\nsay which (`acpscope ls` shows them)", ErrAmbiguous, name, len(found), dir, strings.Join(found, "\n  "))
		}
	}
	return "", fmt.Errorf("%w: %q in %s; `acpscope ls` shows the captures", ErrNotFound, name, dir)
}

// SaveFindings replaces the lint findings stored with a finished capture.
func SaveFindings(path string, fs []protocol.Finding) error {
	if err := checkHeader(path); err != nil {
		return err
	}
	v, err := json.Marshal(fs)
	if err != nil {
		return fmt.Errorf("saving findings: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return liveError(path)
	}
	if err != nil {
		return corruptError(path, err)
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		mb := tx.Bucket(bucketMeta)
		if mb == nil || mb.Get(keyVersion) == nil {
			return fmt.Errorf("saving findings to %s: %w", path, ErrNotCapture)
		}
		return mb.Put(keyFindings, v)
	})
}

var (
	_ Source = (*Reader)(nil)
	_ Source = (*Live)(nil)
)

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
