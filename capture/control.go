package capture

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// A capture's control socket carries what a person does to a live run
// (messages held, edited, released; messages sent by hand) from
// `acpscope send` or the inspector to the proxy. It lies beside the live
// feed's socket, in the same private directories (feedPlaces), under the
// feed's name with ".ctl.sock": whoever can reach it can change traffic,
// so it is never a network port and never in a directory that is not the
// user's own and closed to others. The socket itself is 0600.

// controlPlaces returns where the control socket of the capture at path
// may be, in the feed's order.
func controlPlaces(path string) []feedPlace {
	var out []feedPlace
	for _, p := range feedPlaces(path) {
		p.sock = strings.TrimSuffix(p.sock, ".sock") + ".ctl.sock"
		if len(p.sock) <= maxSocketPath {
			out = append(out, p)
		}
	}
	return out
}

// ListenControl listens on the control socket of the capture at path,
// at the first of its places whose directory is private; warn hears of
// places passed over. It returns the listener and the socket's path.
func ListenControl(path string, warn func(string)) (net.Listener, string, error) {
	var refused []error
	for _, p := range controlPlaces(path) {
		if err := p.prepare(); err != nil {
			refused = append(refused, fmt.Errorf("not using %s for the control socket: %w", p.dir, err))
			continue
		}
		for _, r := range refused {
			warn(r.Error())
		}
		os.Remove(p.sock) // only this user can write here: a crashed proxy's socket
		ln, err := net.Listen("unix", p.sock)
		if err != nil {
			return nil, "", fmt.Errorf("control socket %s: %w", p.sock, err)
		}
		if err := os.Chmod(p.sock, 0o600); err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("control socket %s: %w", p.sock, err)
		}
		return ln, p.sock, nil
	}
	return nil, "", fmt.Errorf("no private directory for the control socket of %s: keep captures in a directory only you can open (0700), or set XDG_RUNTIME_DIR: %w",
		path, errors.Join(refused...))
}

// DialControl connects to the control socket of the capture at path. It
// dials only sockets that are this user's, mode 0600, in a private
// directory, so no one else can pose as the proxy.
func DialControl(path string, timeout time.Duration) (net.Conn, error) {
	var problems []string
	for _, p := range controlPlaces(path) {
		if err := checkPrivateDir(p.dir); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				problems = append(problems, "not trusting "+err.Error())
			}
			continue
		}
		fi, err := os.Lstat(p.sock)
		if err != nil || fi.Mode().Type() != os.ModeSocket {
			continue
		}
		if uid, known := fileOwner(fi); known && uid != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 {
			problems = append(problems, fmt.Sprintf("not trusting %s: not yours or open to others (mode %04o)", p.sock, fi.Mode().Perm()))
			continue
		}
		c, err := net.DialTimeout("unix", p.sock, timeout)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			problems = append(problems, err.Error())
		}
	}
	msg := "no control socket answers for " + path + ": is its proxy still running, started with --allow-intercept?"
	if len(problems) > 0 {
		msg += " (" + strings.Join(problems, "; ") + ")"
	}
	return nil, errors.New(msg)
}
