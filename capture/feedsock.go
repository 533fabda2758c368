package capture

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// listenFeed listens for the live feed of the capture at path, at the
// first of its places whose directory is private (see feedPlaces). Places
// passed over because their directory is not private are told to warn.
// The socket is 0600: its directory already keeps others out, and the
// mode keeps them out should the directory ever be opened.
func listenFeed(path string, warn func(string)) (net.Listener, string, error) {
	place, refused, err := pickPlace(path)
	if err != nil {
		return nil, "", err // it names every place refused
	}
	for _, r := range refused {
		warn(r.Error())
	}
	// Only this user can write here: a file at the name is a socket a
	// crashed proxy of this capture left behind.
	os.Remove(place.sock)
	ln, err := net.Listen("unix", place.sock)
	if err != nil {
		return nil, "", err
	}
	if err := os.Chmod(place.sock, 0o600); err != nil {
		ln.Close()
		return nil, "", err
	}
	return ln, place.sock, nil
}

// dialFeed connects to the live feed of the capture at path: the first of
// its places whose directory is private and whose socket answers. A
// socket in a directory that is not private is never dialled, so no one
// else can pose as the proxy. With clean, sockets no one answers on (left
// by a proxy that crashed) are removed.
func dialFeed(path string, timeout time.Duration, clean bool) (net.Conn, error) {
	var looked, problems []string
	for _, p := range feedPlaces(path) {
		if err := checkPrivateDir(p.dir); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				problems = append(problems, "not trusting "+err.Error())
			}
			continue
		}
		looked = append(looked, p.sock)
		if fi, err := os.Lstat(p.sock); err != nil || fi.Mode().Type() != os.ModeSocket {
			continue
		}
		c, err := net.DialTimeout("unix", p.sock, timeout)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			if clean {
				os.Remove(p.sock)
			}
			continue
		}
		problems = append(problems, err.Error())
	}
	msg := "no feed socket at " + strings.Join(looked, " or ")
	if len(looked) == 0 {
		msg = "no private directory holds a feed socket for it"
	}
	if len(problems) > 0 {
		msg += "; " + strings.Join(problems, "; ")
	}
	return nil, errors.New(msg)
}

// SweepSockets removes the feed sockets no proxy answers on (those of
// proxies that were killed) from the capture directory dir and from
// acpscope's own socket directories, where nothing else would remove
// them once their captures are gone. It returns how many it removed.
func SweepSockets(dir string) int {
	n := 0
	for _, d := range append([]string{dir}, sockDirs()...) {
		if checkPrivateDir(d) != nil {
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Type() != os.ModeSocket || !isFeedSocketName(e.Name()) {
				continue
			}
			sock := filepath.Join(d, e.Name())
			c, err := net.DialTimeout("unix", sock, 200*time.Millisecond)
			if err == nil {
				c.Close()
				continue
			}
			if errors.Is(err, syscall.ECONNREFUSED) && os.Remove(sock) == nil {
				n++
			}
		}
	}
	return n
}

// isFeedSocketName tells the names feedPlaces gives sockets.
func isFeedSocketName(name string) bool {
	return strings.HasSuffix(name, Ext+".sock") ||
		strings.HasPrefix(strings.TrimPrefix(name, "."), "acpscope-") && strings.HasSuffix(name, ".sock")
}
