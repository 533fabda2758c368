package agent

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// groupAlive reports whether a live (not zombie) process of the group is
// still there. kill(-pgid, 0) alone would count zombies that an init
// which does not reap leaves behind, and make us wait for nothing.
func groupAlive(pgid int) bool {
	if pgid <= 0 || syscall.Kill(-pgid, 0) != nil {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && liveInGroup(pid, pgid) {
			return true
		}
	}
	return false
}

// liveInGroup reads /proc/PID/stat: "pid (comm) state ppid pgrp …"; comm
// may hold spaces and parentheses, so fields are counted after the last ')'.
func liveInGroup(pid, pgid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
		return false
	}
	g, err := strconv.Atoi(string(f[2]))
	return err == nil && g == pgid
}
