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
