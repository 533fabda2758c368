//go:build unix && !linux

package agent

import (
	"os"
	"syscall"
)

func growPipe(*os.File) {}

// setDeathSignal: only Linux can tie the agent's life to ours.
func setDeathSignal(*syscall.SysProcAttr) {}

// awaitExit returns at once: Wait blocks a thread until the agent exits.
func awaitExit(int) {}
