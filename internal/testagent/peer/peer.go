package peer

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Main runs the mode named by args[0] and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "testagent: mode required: echo, acp, acp-mcp, exit, exit-at-once, kill-self, stderr, ignore-eof, talk, spawn-child, burst, trap, sleep")
		return 2
	}
	mode, rest := args[0], args[1:]
	switch mode {
	case "echo":
		return echo(stdin, stdout, stderr)
	case "acp":
		return acp(stdin, stdout, stderr)
	case "acp-mcp":
		return acpMCP(stdin, stdout, stderr)
	case "exit":
		echo(stdin, stdout, stderr)
		return atoi(rest, 0)
	case "exit-at-once":
		return atoi(rest, 0)
	case "kill-self":
		return killSelf(rest, stderr)
	case "stderr":
		for _, l := range rest {
			fmt.Fprintln(stderr, l)
		}
		return echo(stdin, stdout, stderr)
	case "ignore-eof":
		if len(rest) > 0 && rest[0] == "--ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		echo(stdin, stdout, stderr)
		sleepForever()
	case "talk":
		if len(rest) > 2 && rest[2] == "--ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		echo(stdin, stdout, stderr)
		talk(stderr, atoiAt(rest, 0, 10), atoiAt(rest, 1, 100))
		sleepForever()
	case "spawn-child":
		return spawnChild(stdin, stdout, stderr)
	case "burst":
		return burst(stdout, atoiAt(rest, 0, 1000), atoiAt(rest, 1, 200), atoiAt(rest, 2, 0))
	case "trap":
		return trap(stdin, stdout, stderr)
	case "sleep":
		sleepForever()
	case "pid":
		fmt.Fprintf(stderr, "pid %d\n", os.Getpid())
		return Main(rest, stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "testagent: unknown mode %q\n", mode)
	return 2
}

// echo copies stdin to stdout, one write per read, so a line of any size
// flows through without being buffered whole.
func echo(stdin io.Reader, stdout, stderr io.Writer) int {
	buf := make([]byte, 1<<20)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if _, werr := stdout.Write(buf[:n]); werr != nil {
				fmt.Fprintf(stderr, "testagent: writing stdout: %v\n", werr)
				return 1
			}
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "testagent: reading stdin: %v\n", err)
			return 1
		}
	}
}

func killSelf(rest []string, stderr io.Writer) int {
	sig := parseSignal(strings.Join(rest, ""))
	if sig == 0 {
		fmt.Fprintf(stderr, "testagent: kill-self: unknown signal %q\n", rest)
		return 2
	}
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(10 * time.Second) // the signal arrives long before
	return 1
}

func parseSignal(s string) syscall.Signal {
	switch strings.TrimPrefix(strings.ToUpper(s), "SIG") {
	case "TERM":
		return syscall.SIGTERM
	case "INT":
		return syscall.SIGINT
	case "HUP":
		return syscall.SIGHUP
	case "KILL":
		return syscall.SIGKILL
	}
	n, _ := strconv.Atoi(s)
	return syscall.Signal(n)
}

func spawnChild(stdin io.Reader, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "testagent: %v\n", err)
		return 1
	}
	child := exec.Command(self, "sleep")
	if err := child.Start(); err != nil {
		fmt.Fprintf(stderr, "testagent: starting child: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "child %d\n", child.Process.Pid)
	return echo(stdin, stdout, stderr)
}

func trap(stdin io.Reader, stdout, stderr io.Writer) int {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() { // reporter: lives as long as the process
		for s := range c {
			fmt.Fprintf(stderr, "trap %s\n", sigName(s.(syscall.Signal)))
		}
	}()
	fmt.Fprintln(stderr, "trap ready")
	return echo(stdin, stdout, stderr)
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// talk writes n numbered lines (n 0: forever) to w, ms milliseconds apart.
func talk(w io.Writer, n, ms int) {
	for i := 1; n == 0 || i <= n; i++ {
		fmt.Fprintf(w, "talk %d\n", i)
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func atoi(args []string, def int) int { return atoiAt(args, 0, def) }

func atoiAt(args []string, i, def int) int {
	if i >= len(args) {
		return def
	}
	n, err := strconv.Atoi(args[i])
	if err != nil {
		return def
	}
	return n
}
