package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Where the live feed's socket lives. Whoever can bind the name before
// the proxy can stop its feed or serve readers false records, and whoever
// can connect reads every message; so the socket lies only in a directory
// that is the user's own and closed to everyone else (0700), checked
// before each use, and never under a name in a shared directory such as
// /tmp. feedPlaces is the one place that decides: the writer listens at
// the first of its places whose directory passes, and readers try the
// same places in the same order.

// maxSocketPath keeps feed socket paths under the kernel's limit for
// unix socket addresses (108 bytes on Linux, 104 on BSDs and macOS).
const maxSocketPath = 100

// feedPlace is one place a feed socket may be: the socket's path and the
// directory that must be private for it to be used.
type feedPlace struct {
	dir  string
	sock string
	// ours: dir is acpscope's own, made by the writer when missing; the
	// capture directory itself is the user's and is only checked.
	ours bool
}

// feedPlaces returns where the live feed of the capture at path may be,
// in order: beside the file, or under a hash of its path in the same
// directory when that name is too long, both only when the capture
// directory is private; then $XDG_RUNTIME_DIR/acpscope and the user's
// state directory (acpscope/live). Only places whose path fits a unix
// socket address are returned.
func feedPlaces(path string) []feedPlace {
	canon := canonicalPath(path)
	capDir := filepath.Dir(canon)
	name := "acpscope-" + pathHash(canon) + ".sock"
	var places []feedPlace
	add := func(dir, sock string, ours bool) {
		if len(sock) <= maxSocketPath {
			places = append(places, feedPlace{dir: dir, sock: sock, ours: ours})
		}
	}
	if checkPrivateDir(capDir) == nil {
		if len(canon+".sock") <= maxSocketPath {
			add(capDir, canon+".sock", false)
		} else {
			add(capDir, filepath.Join(capDir, "."+name), false)
		}
	}
	for _, dir := range sockDirs() {
		add(dir, filepath.Join(dir, name), true)
	}
	return places
}

// sockDirs returns acpscope's own socket directories, in order:
// $XDG_RUNTIME_DIR/acpscope and the state directory's acpscope/live.
func sockDirs() []string {
	var dirs []string
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		dirs = append(dirs, filepath.Join(rt, "acpscope"))
	}
	if state := stateDir(); state != "" {
		dirs = append(dirs, filepath.Join(state, "acpscope", "live"))
	}
	return dirs
}

// canonicalPath makes writer and readers name a capture alike: absolute,
// its directory's symbolic links resolved.
func canonicalPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func pathHash(canon string) string {
	sum := sha256.Sum256([]byte(canon))
	return hex.EncodeToString(sum[:8])
}

// stateDir is ${XDG_STATE_HOME:-~/.local/state}, or "" when neither is known.
func stateDir() string {
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return s
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state")
}

// checkPrivateDir reports whether dir is a directory, not a symbolic link,
// owned by this user and closed to group and others. Its errors wrap
// ErrNotPrivate and say what to do.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	me := os.Geteuid()
	uid, known := fileOwner(fi)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return notPrivate(dir, "is a symbolic link", "remove it")
	case !fi.IsDir():
		return notPrivate(dir, "is not a directory", "remove it")
	case known && uid != me:
		return notPrivate(dir, fmt.Sprintf("belongs to uid %d, not to you (uid %d)", uid, me), "remove it")
	case fi.Mode().Perm()&0o077 != 0:
		return notPrivate(dir, fmt.Sprintf("is open to others (mode %04o)", fi.Mode().Perm()), "`chmod 700` it")
	}
	return nil
}

// privateDirError says why a directory is not private; it is ErrNotPrivate.
type privateDirError struct{ dir, why, fix string }

func notPrivate(dir, why, fix string) error { return privateDirError{dir, why, fix} }

func (e privateDirError) Error() string { return e.dir + " " + e.why + "; " + e.fix }

func (privateDirError) Is(target error) bool { return target == ErrNotPrivate }

// prepare makes the place's directory ready for a socket: acpscope's own
// directories are created (0700) when missing; then it must be private.
func (p feedPlace) prepare() error {
	if p.ours {
		if err := os.MkdirAll(filepath.Dir(p.dir), 0o700); err != nil {
			return err
		}
		if err := os.Mkdir(p.dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return checkPrivateDir(p.dir)
}

// SocketPath returns where the writer of the capture at path serves its
// live feed, creating acpscope's private socket directory if that is
// where it goes. It fails when no place is private, saying why.
func SocketPath(path string) (string, error) {
	place, _, err := pickPlace(path)
	return place.sock, err
}

// pickPlace returns the first place for the feed of path whose directory
// is private, and the places passed over because their directory was not
// (an unexpected owner, mode or symbolic link: the user should know).
func pickPlace(path string) (feedPlace, []error, error) {
	var refused []error
	for _, p := range feedPlaces(path) {
		err := p.prepare()
		if err == nil {
			return p, refused, nil
		}
		refused = append(refused, fmt.Errorf("not using %s for the live feed's socket: %w", p.dir, err))
	}
	if len(refused) == 0 {
		return feedPlace{}, nil, fmt.Errorf("no private directory for the live feed's socket of %s: keep captures in a directory only you can open (0700), or set XDG_RUNTIME_DIR", path)
	}
	return feedPlace{}, refused, fmt.Errorf("no private directory for the live feed's socket of %s: %w", path, errors.Join(refused...))
}
