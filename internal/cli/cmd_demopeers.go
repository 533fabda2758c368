package cli

// The demo peers as hidden subcommands, so that `acpscope demo`, the
// tests and users can wire them with pipes:
//
//	acpscope demo-client -- acpscope --capture x.acpscope -- acpscope demo-agent

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/acpscope/acpscope/internal/demo"
	flag "github.com/spf13/pflag"
)

// demoAgentHelp is `acpscope demo-agent`'s synopsis, examples and flags.
func demoAgentHelp() help {
	return help{
		usage: "[--mutate title|extra|drop] [--session-scheme counter|uuid] [--delay D]",
		example: `  acpscope -- acpscope demo-agent
  acpscope demo-agent --mutate title     # a deliberately different agent, for replay tests`,
		setup: func(fs *flag.FlagSet) {
			fs.String("mutate", "", "change one thing on purpose: title, extra or drop")
			fs.String("session-scheme", demo.SchemeCounter, "session ids: counter (sess_1, …) or uuid")
			durationFlag(fs, "delay", 5*time.Millisecond, "pause between streamed chunks")
		},
	}
}

// demoClientHelp is `acpscope demo-client`'s synopsis, examples and flags.
func demoClientHelp() help {
	return help{
		usage: "[flags] [-- AGENT CMD…]",
		example: `  acpscope demo-client -- acpscope demo-agent
  acpscope demo-client --cancel --mcp-secret -- acpscope --capture demo.acpscope -- acpscope demo-agent`,
		setup: func(fs *flag.FlagSet) {
			fs.SetInterspersed(false) // everything after the first plain word is the agent's
			fs.Bool("cancel", false, "cancel the second prompt at its permission request")
			fs.Bool("load", false, "session/load the first session at the end")
			fs.Bool("mcp-secret", false, "send an MCP server whose env holds a secret (redaction tests)")
			fs.Bool("minimal", false, "advertise no fs and no terminal capabilities")
			fs.Int("sessions", 1, "sessions to open one after another")
			fs.StringArray("prompt", nil, "prompt text (repeat for more turns; default: two demo prompts)")
			fs.String("cwd", demo.DefaultCwd, "workspace path sent as cwd (the files are in memory)")
			fs.String("traceparent", "", "send this W3C traceparent in every session/prompt's _meta, as an editor that traces its work does")
		},
	}
}

// signalContext ends on SIGINT, SIGTERM or SIGHUP.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

func runDemoAgent(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("demo-agent takes no arguments, got %q", args)
	}
	opts := demo.AgentOptions{Log: os.Stderr}
	opts.Mutate, _ = fs.GetString("mutate")
	opts.SessionScheme, _ = fs.GetString("session-scheme")
	opts.Delay, _ = fs.GetDuration("delay")
	ctx, stop := signalContext()
	defer stop()
	if err := demo.RunAgent(ctx, os.Stdin, os.Stdout, opts); err != nil {
		return 1, err
	}
	return 0, nil
}

func demoClientOptions(fs *flag.FlagSet) demo.ClientOptions {
	var o demo.ClientOptions
	o.Cancel, _ = fs.GetBool("cancel")
	o.Load, _ = fs.GetBool("load")
	o.MCPSecret, _ = fs.GetBool("mcp-secret")
	o.Minimal, _ = fs.GetBool("minimal")
	o.Sessions, _ = fs.GetInt("sessions")
	o.Prompts, _ = fs.GetStringArray("prompt")
	if len(o.Prompts) == 0 {
		o.Prompts = nil
	}
	o.Cwd, _ = fs.GetString("cwd")
	o.TraceParent, _ = fs.GetString("traceparent")
	return o
}

// runDemoClient speaks on stdin/stdout (the summary goes to stderr, as
// stdout belongs to the protocol), or spawns AGENT CMD and prints the
// summary on stdout.
func runDemoClient(fs *flag.FlagSet, args []string) (int, error) {
	opts := demoClientOptions(fs)
	ctx, stop := signalContext()
	defer stop()
	var (
		sum demo.Summary
		err error
		out = os.Stderr
	)
	if len(args) > 0 {
		sum, err = demo.ClientOverPipes(ctx, args, os.Stderr, opts)
		out = os.Stdout
	} else {
		sum, err = demo.RunClient(ctx, os.Stdin, os.Stdout, opts)
	}
	if sum.ProtocolVersion != 0 { // initialize got through: there is something to tell
		fmt.Fprint(out, sum.String())
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
