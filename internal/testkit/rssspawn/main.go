//go:build unix

// Command rssspawn runs the command its arguments name, with its own
// standard streams, and writes to file descriptor 3 the command's peak
// RSS (KiB), CPU time and wall time (ns), then exits with its status.
// Tests that judge a command's memory start it through rssspawn.
//
// A process's peak RSS as the kernel counts it (ru_maxrss) starts from
// the peak of the process that called exec, which for a child started
// with vfork is its parent. Started from a test binary, a command would
// count the test binary's pages; started from a race-instrumented one,
// about 45 MiB before the command touches a byte. rssspawn is small and
// never built with the race detector, so what it reports is the
// command's. It is built where the kernel keeps ru_maxrss: Unix.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rssspawn COMMAND [ARG...]  (the report goes to file descriptor 3)")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "rssspawn:", err)
		os.Exit(2)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	fmt.Fprintf(os.NewFile(3, "report"), "%d %d %d\n", ru.Maxrss, cpu.Nanoseconds(), wall.Nanoseconds())
	os.Exit(cmd.ProcessState.ExitCode())
}
