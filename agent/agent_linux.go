package agent

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// awaitExit blocks until process pid has exited, without reaping it and
// without holding an OS thread: it parks on a pidfd in the runtime's
// poller. os.Process.Wait blocks a thread in waitid for the agent's whole
// life, and the runtime never gives idle threads back, so 500 agents
// alive at once left serve with 500 threads for good. After awaitExit,
// Wait returns at once. Where pidfds are missing (Linux before 5.10) it
// returns at once and Wait blocks a thread as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool { // a pidfd is readable once the process has exited
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		return (err != nil && err != unix.EINTR) || n > 0
	})
}
