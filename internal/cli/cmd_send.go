package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/acpscope/acpscope/fault"
	flag "github.com/spf13/pflag"
)

// sendHelp is `acpscope send`'s synopsis, examples and flags.
func sendHelp() help {
	return help{
		usage: "[CAPTURE] --to agent|client MESSAGE|@FILE|-",
		example: `  acpscope send --to agent '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess_1"}}'
  acpscope send latest --to client @update.json    # a crafted session/update for the editor
  acpscope send --to agent - < answer.json         # an answer to a pending request

The message goes out exactly as given (one line; a trailing newline is
dropped), through the capture's private control socket, into the running
proxy, which must have been started with --allow-intercept. It is recorded
in the capture as sent by hand.`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.String("to", "", "who receives it: agent or client")
			fs.Uint32("conn", 0, "the connection, for captures with several (HTTP)")
		},
	}
}

func runSend(fs *flag.FlagSet, args []string) (int, error) {
	to, _ := fs.GetString("to")
	if _, ok := fault.ParseTo(to); !ok {
		return 2, usageErrorf("--to %q: write --to agent or --to client", to)
	}
	if len(args) == 0 || len(args) > 2 {
		return 2, usageErrorf("want [CAPTURE] MESSAGE (or @FILE, or - for stdin), got %q", args)
	}
	msg, err := readMessage(args[len(args)-1])
	if err != nil {
		return 2, err
	}
	path, err := oneCapture(fs, args[:len(args)-1])
	if err != nil {
		return captureErrCode(err), err
	}
	c, err := fault.Dial(path, 5*time.Second)
	if err != nil {
		return 1, err
	}
	defer c.Close()
	conn, _ := fs.GetUint32("conn")
	id, err := c.Send(to, conn, msg)
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "acpscope: sent %d bytes to the %s (fault #%d in %s)\n", len(msg), to, id, captureRef(path))
	return 0, nil
}

// maxSendSize bounds a message read from a file or stdin.
const maxSendSize = 64 << 20

// readMessage reads MESSAGE, @FILE or - (stdin), as one line.
func readMessage(arg string) ([]byte, error) {
	var b []byte
	switch {
	case arg == "-":
		var err error
		if b, err = io.ReadAll(io.LimitReader(os.Stdin, maxSendSize+1)); err != nil {
			return nil, err
		}
	case strings.HasPrefix(arg, "@"):
		f, err := os.Open(arg[1:])
		if err != nil {
			return nil, usageErrorf("reading the message: %v", err)
		}
		defer f.Close()
		if b, err = io.ReadAll(io.LimitReader(f, maxSendSize+1)); err != nil {
			return nil, err
		}
	default:
		b = []byte(arg)
	}
	if len(b) > maxSendSize {
		return nil, usageErrorf("the message is over %d MiB", maxSendSize>>20)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" || strings.Contains(s, "\n") {
		return nil, usageErrorf("the message must be one non-empty line (JSON-RPC messages are newline-delimited)")
	}
	return []byte(s), nil
}
