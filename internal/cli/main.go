package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	flag "github.com/spf13/pflag"
)

// version is set at build time with
// -ldflags "-X github.com/acpscope/acpscope/internal/cli.version=…".
var version = "0.1.0-dev"

// errUsage marks errors that are the user's to fix; they print with a
// hint to --help and exit 2.
var errUsage = errors.New("usage")

func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// Main runs acpscope with args (without the program name) and returns
// the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		printOverview(stderr, cmds)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 {
			c, ok := findCommand(cmds, args[1])
			if !ok {
				fmt.Fprintf(stderr, "acpscope help: unknown command %q; run 'acpscope --help' for the list\n", args[1])
				return 2
			}
			h := c.help()
			printCommandHelp(stdout, c, h, newFlagSet(c, h))
			return 0
		}
		printOverview(stdout, cmds)
		return 0
	case "--version", "version":
		fmt.Fprintln(stdout, "acpscope", version)
		return 0
	}
	// The editor-config form: acpscope [proxy flags] -- AGENT CMD…
	if args[0] == "--" || strings.HasPrefix(args[0], "-") {
		stdio, _ := findCommand(cmds, "stdio")
		return runCommand(stdio, args, stderr)
	}
	c, ok := findCommand(cmds, args[0])
	if !ok {
		fmt.Fprintf(stderr, "acpscope: unknown command %q; run 'acpscope --help' for the list, or 'acpscope -- AGENT CMD…' to proxy an agent\n", args[0])
		return 2
	}
	return runCommand(c, args[1:], stderr)
}

func newFlagSet(c command, h help) *flag.FlagSet {
	fs := flag.NewFlagSet("acpscope "+c.name, flag.ContinueOnError)
	fs.SortFlags = false
	if h.setup != nil {
		h.setup(fs)
	}
	return fs
}

func runCommand(c command, args []string, stderr io.Writer) int {
	h := c.help()
	fs := newFlagSet(c, h)
	fs.SetOutput(io.Discard)
	var rest []string
	if c.raw {
		rest = args
	} else {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandHelp(os.Stdout, c, h, fs)
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
			printCommandHelp(os.Stdout, c, h, fs)
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

func printOverview(w io.Writer, cmds []command) {
	fmt.Fprint(w, `acpscope: see, record and replay Agent Client Protocol traffic

usage:
  acpscope [flags] -- AGENT CMD…     proxy a stdio agent (put this in your editor's agent config);
                                     'acpscope stdio --help' lists its flags (--capture, --name, --grace…)
  acpscope COMMAND [flags] [args]

commands:
`)
	for _, c := range cmds {
		if !c.hidden {
			fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprint(w, "\nrun 'acpscope COMMAND --help' for a command's flags and examples\n")
}

func printCommandHelp(w io.Writer, c command, h help, fs *flag.FlagSet) {
	name := " " + c.name
	if c.name == "stdio" {
		name = "" // acpscope [flags] -- AGENT CMD…
	}
	fmt.Fprintf(w, "usage: acpscope%s %s\n\n%s\n", name, h.usage, c.summary)
	if u := fs.FlagUsages(); u != "" {
		fmt.Fprintf(w, "\nflags:\n%s", u)
	}
	if h.example != "" {
		fmt.Fprintf(w, "\nexamples:\n%s\n", strings.TrimRight(h.example, "\n"))
	}
}
