//go:build unix

package agent

import "syscall"

// agentProcAttr puts the agent in its own process group so that signals
// we forward reach every process it spawned, and so that a Ctrl-C typed
// in a terminal reaches it only through us.
func agentProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	return attr
}

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return syscall.ESRCH
	}
	return syscall.Kill(-pgid, sig)
}
