package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxSocketPath keeps feed socket paths under the kernel's limit for
// unix socket addresses (108 bytes on Linux, 104 on BSDs and macOS).
const maxSocketPath = 100

// SocketPath returns where the live feed of the capture at path listens:
// beside the file, or in the temp directory under a hash of the file's
// absolute path when that would be too long. Writer and readers both use
// it, so they always agree.
func SocketPath(path string) string {
	sock := path + ".sock"
	if len(sock) <= maxSocketPath {
		return sock
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "acpscope-"+hex.EncodeToString(sum[:8])+".sock")
}

// removeStaleSocket deletes the feed socket of path if no one answers on
// it: a proxy that crashed left it behind. It reports whether a live
// server answered.
func removeStaleSocket(path string) (live bool) {
	sock := SocketPath(path)
	if _, err := os.Lstat(sock); err != nil {
		return false
	}
	c, err := net.DialTimeout("unix", sock, 200*time.Millisecond)
	if err == nil {
		c.Close()
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		os.Remove(sock)
	}
	return false
}
