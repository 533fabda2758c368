//go:build !linux

package fault

import "net"

// checkPeer relies on the socket's private directory and 0600 mode where
// the kernel's peer credentials are not read.
func checkPeer(net.Conn) error { return nil }
