// Package cli is acpscope's command line: it parses the first word and
// hands the rest to a subcommand. Each subcommand lives in its own cmd_*.go
// file and registers itself in init.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	flag "github.com/spf13/pflag"
)

// version is set at build time with
// -ldflags "-X github.com/acpscope/acpscope/internal/cli.version=…".
var version = "0.1.0-dev"

// command is one subcommand.
type command struct {
	name    string
	usage   string // the argument synopsis after the name
	summary string // one line for the command list
	example string // shown under --help
	hidden  bool   // internal helpers (demo peers) stay out of the list
	// setup declares the command's flags; run does the work. run returns
	// the process exit code, and an error to print when it is non-zero.
	setup func(fs *flag.FlagSet)
	run   func(fs *flag.FlagSet, args []string) (int, error)
	// raw commands parse their own arguments (the agent's argv follows).
	raw bool
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks errors that are the user's to fix; they print with a
// hint to --help and exit 2.
var errUsage = errors.New("usage")

func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// Main runs acpscope with args (without the program name) and returns
// the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printOverview(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "acpscope help: unknown command %q; run 'acpscope --help' for the list\n", args[1])
				return 2
			}
			printCommandHelp(stdout, c, newFlagSet(c))
			return 0
		}
		printOverview(stdout)
		return 0
	case "--version", "version":
		fmt.Fprintln(stdout, "acpscope", version)
		return 0
	}
	// The editor-config form: acpscope [proxy flags] -- AGENT CMD…
	if args[0] == "--" || strings.HasPrefix(args[0], "-") {
		return runCommand(commands["stdio"], args, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "acpscope: unknown command %q; run 'acpscope --help' for the list, or 'acpscope -- AGENT CMD…' to proxy an agent\n", args[0])
		return 2
	}
	return runCommand(c, args[1:], stderr)
}

func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("acpscope "+c.name, flag.ContinueOnError)
	fs.SortFlags = false
	if c.setup != nil {
		c.setup(fs)
	}
	return fs
}

func runCommand(c *command, args []string, stderr io.Writer) int {
	fs := newFlagSet(c)
	fs.SetOutput(io.Discard)
	var rest []string
	if c.raw {
		rest = args
	} else {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandHelp(os.Stdout, c, fs)
				return 0
			}
			fmt.Fprintf(stderr, "acpscope %s: %v\nrun 'acpscope %s --help' for usage\n", c.name, err, c.name)
			return 2
		}
		rest = fs.Args()
	}
	code, err := c.run(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(os.Stdout, c, fs)
			return 0
		}
		msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
		fmt.Fprintf(stderr, "acpscope %s: %s\n", c.name, msg)
		if errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "run 'acpscope %s --help' for usage\n", c.name)
			if code == 0 {
				code = 2
			}
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

func printOverview(w io.Writer) {
	fmt.Fprint(w, `acpscope: see, record and replay Agent Client Protocol traffic

usage:
  acpscope [flags] -- AGENT CMD…     proxy a stdio agent (put this in your editor's agent config);
                                     'acpscope stdio --help' lists its flags (--capture, --name, --grace…)
  acpscope COMMAND [flags] [args]

commands:
`)
	names := make([]string, 0, len(commands))
	for name, c := range commands {
		if !c.hidden && name != "stdio" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
	}
	fmt.Fprint(w, "\nrun 'acpscope COMMAND --help' for a command's flags and examples\n")
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	name := c.name
	if name == "stdio" {
		name = ""
	} else {
		name = " " + name
	}
	fmt.Fprintf(w, "usage: acpscope%s %s\n\n%s\n", name, c.usage, c.summary)
	if u := fs.FlagUsages(); u != "" {
		fmt.Fprintf(w, "\nflags:\n%s", u)
	}
	if c.example != "" {
		fmt.Fprintf(w, "\nexamples:\n%s\n", strings.TrimRight(c.example, "\n"))
	}
}
