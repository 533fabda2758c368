package cli

import flag "github.com/spf13/pflag"

// command is one subcommand: what the overview lists, and what runs it.
type command struct {
	name    string
	summary string // one line for the overview and the top of --help
	// run does the work with the flags help().setup declared. It returns
	// the process exit code, and an error to print when it is non-zero.
	run  func(fs *flag.FlagSet, args []string) (int, error)
	help func() help // the rest of --help, kept in the command's own file
	// hidden commands stay out of the overview: the stdio proxy has its
	// own usage line there, the peers are programs acpscope runs itself.
	hidden bool
	// raw commands parse their own arguments (the agent's argv follows).
	raw bool
}

// help is what `acpscope COMMAND --help` prints below the summary, and
// the flags the command takes.
type help struct {
	usage   string // the argument synopsis after the name
	example string
	setup   func(fs *flag.FlagSet) // declares the flags
}

// commands is every subcommand, in the order the overview prints them.
func commands() []command {
	return []command{
		{name: "bench", run: runBench, help: benchHelp,
			summary: "measure the stdio proxy against a direct pipe, a minimal forwarder and a tee logging pipeline, and print one table"},
		{name: "connect", run: runConnect, help: connectHelp,
			summary: "let a stdio-only editor use a remote agent over Streamable HTTP or WebSocket, recording everything"},
		{name: "demo", run: runDemo, help: demoHelp,
			summary: "run a built-in ACP client and agent through the proxy into a capture, then show it"},
		{name: "diff", run: runDiff, help: diffHelp,
			summary: "compare two captures: messages added, removed or changed, metadata and latency"},
		{name: "dump", run: runDump, help: dumpHelp,
			summary: "print a capture: a table, JSONL for jq, or the wire messages one per line"},
		{name: "export", run: runExport, help: exportHelp,
			summary: "write one session as a redacted bug-report file, JSONL or a Mermaid sequence diagram"},
		{name: "faults", run: runFaults, help: faultsHelp,
			summary: "check a fault plan (and what it would act on in a capture), list the ready-made plans"},
		{name: "gc", run: runGC, help: gcHelp,
			summary: "delete old captures (never a live one) to keep the capture directory small"},
		{name: "import", run: runImport, help: importHelp,
			summary: "turn a capture file, JSONL or an acp-devtools JSON export into a new capture"},
		{name: "info", run: runInfo, help: infoHelp,
			summary: "what the two sides told each other: names, versions, capabilities, auth, modes, models, commands, sessions"},
		{name: "inspect", run: runInspect, help: inspectHelp,
			summary: "browse captures in a terminal UI: messages, pretty JSON, conversation, statistics, live follow"},
		{name: "lint", run: runLint, help: lintHelp,
			summary: "check a capture against JSON-RPC 2.0, the stdio and HTTP transports and the ACP lifecycle"},
		{name: "ls", run: runLs, help: lsHelp,
			summary: "list captures, newest first"},
		{name: "proxy", run: runProxy, help: proxyHelp,
			summary: "reverse-proxy a remote agent over Streamable HTTP and WebSocket, recording every message"},
		{name: "replay", run: runReplay, help: replayHelp,
			summary: "re-drive a capture: against an agent (compare what it sends) or as the agent for an editor"},
		{name: "search", run: runSearch, help: searchHelp,
			summary: "find messages in every capture, newest first: words or a filter; --open starts the inspector there"},
		{name: "send", run: runSend, help: sendHelp,
			summary: "inject a message into a live session, toward the agent or the client (proxy run with --allow-intercept)"},
		{name: "serve", run: runServe, help: serveHelp,
			summary: "expose a stdio agent as a remote ACP agent over Streamable HTTP and WebSocket, recording everything"},
		{name: "show", run: runShow, help: showHelp,
			summary: "print one message: metadata, pretty JSON and its paired request or response"},
		{name: "stats", run: runStats, help: statsHelp,
			summary: "per method: calls, errors, latency percentiles and bytes each way"},
		{name: "tail", run: runTail, help: tailHelp,
			summary: "follow a live capture message by message (the newest live one by default); -F carries on across agent restarts"},

		// `acpscope [flags] -- AGENT CMD…` runs this one.
		{name: "stdio", run: runStdio, help: stdioHelp, hidden: true,
			summary: "proxy a stdio agent: forward both ways byte for byte and record every message"},
		{name: "bench-peer", run: runBenchPeer, help: benchPeerHelp, hidden: true, raw: true,
			summary: "the benchmark's test agent"},
		{name: "demo-agent", run: runDemoAgent, help: demoAgentHelp, hidden: true,
			summary: "the built-in scripted ACP agent, on stdin/stdout (for demos and tests)"},
		{name: "demo-client", run: runDemoClient, help: demoClientHelp, hidden: true,
			summary: "the built-in scripted ACP client: on stdin/stdout, or driving AGENT CMD over pipes"},
	}
}

// findCommand returns the command called name.
func findCommand(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
