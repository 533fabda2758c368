// Package peer implements the modes of the test agent: small, predictable
// behaviours (echo, a minimal ACP agent, exit codes, signals, stderr,
// children, bursts) that acpscope's proxy tests and benchmarks drive
// through real pipes. It uses only the standard library.
//
// Modes (first argument):
//
//	echo                copy stdin to stdout exactly, any size; exit 0 at EOF
//	acp                 answer initialize, session/new and session/prompt
//	acp-mcp             acp, and each prompt of a session that declared an
//	                    MCP server with transport "acp" calls its tool
//	                    "echo" over MCP-over-ACP (mcp/connect, mcp/message,
//	                    mcp/disconnect)
//	exit N              echo until stdin EOF, then exit with code N
//	exit-at-once [N]    exit with code N (default 0) without reading
//	kill-self SIG       kill itself with SIG (TERM, INT, HUP, KILL, or a number)
//	stderr LINE…        write each LINE to stderr, then echo
//	ignore-eof [--ignore-term]
//	                    echo, then keep running after stdin EOF, as codex-acp
//	                    does; with --ignore-term SIGTERM is ignored as well
//	talk N MS [--ignore-term]
//	                    echo, then after stdin EOF write "talk I" on stderr N
//	                    times (0: forever), one every MS milliseconds, then
//	                    fall silent and keep running
//	spawn-child         start a child (in the agent's process group) that sleeps
//	                    forever, print "child PID" on stderr, then echo
//	burst N S [RATE]    write N newline-terminated JSON lines of S bytes each
//	                    (newline included) as fast as possible, or at RATE
//	                    lines per second, then exit 0
//	trap                print "trap SIGNAME" on stderr for each SIGINT, SIGTERM
//	                    or SIGHUP, keep echoing, exit 0 at stdin EOF
//	sleep               sleep forever (the child of spawn-child)
//	pid MODE…           print "pid PID" on stderr, then run MODE
//
// # Concurrency
//
// Each mode runs on the process's main goroutine. The one goroutine a
// mode starts is trap's reporter, which writes a line for each signal
// received and lives as long as the process.
package peer
