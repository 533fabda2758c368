package proxy

import (
	"os"
	"syscall"
)

// pipeSize is the kernel buffer we ask for on the agent's pipes: 1 MiB
// (the default unprivileged maximum) instead of 64 KiB cuts the number of
// read and write calls for bulk output sixteenfold.
const pipeSize = 1 << 20

func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
}

// setDeathSignal asks the kernel to send the agent SIGTERM if the proxy
// dies without stopping it (SIGKILL, a crash): the agent's stdin then
// only reaches EOF, which agents such as codex-acp ignore, and the agent
// would run on as an orphan. The signal is tied to the thread that forked
// it, which in Go lives as long as the process unless a goroutine exits
// while locked to it; nothing here locks threads.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
