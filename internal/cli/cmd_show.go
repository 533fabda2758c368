package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	flag "github.com/spf13/pflag"
)

// showHelp is `acpscope show`'s synopsis, examples and flags.
func showHelp() help {
	return help{
		usage:   "[CAPTURE] SEQ",
		example: `  acpscope show latest 12`,
		setup:   captureDirFlag,
	}
}

func runShow(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) == 0 || len(args) > 2 {
		return 2, usageErrorf("expected [CAPTURE] SEQ, got %q", args)
	}
	seq, err := strconv.ParseUint(args[len(args)-1], 10, 64)
	if err != nil {
		return 2, usageErrorf("SEQ must be a sequence number as 'acpscope dump' prints it, got %q", args[len(args)-1])
	}
	src, _, code, err := openFiltered(fs, args[:len(args)-1], oneCapture, capture.OpenComplete)
	if err != nil {
		return code, err
	}
	defer src.Close()
	if err := showRecord(src, seq, ""); err != nil {
		return 1, err
	}
	rec, _ := src.Record(seq)
	if rec.Peer != 0 {
		fmt.Println()
		return 0, showRecord(src, rec.Peer, "paired with ")
	}
	return 0, nil
}

func showRecord(src capture.Source, seq uint64, prefix string) error {
	rec, err := src.Record(seq)
	switch {
	case errors.Is(err, capture.ErrNoRecord) && src.Last() == 0:
		return fmt.Errorf("no record %d: the capture is empty", seq)
	case errors.Is(err, capture.ErrNoRecord):
		return fmt.Errorf("no record %d: the capture holds 1 to %d", seq, src.Last())
	case err != nil:
		return err
	}
	body, err := src.Body(seq)
	if err != nil {
		return err
	}
	fmt.Printf("%s#%d  %s  %s %s  %s\n", prefix, rec.Seq, rec.When().Local().Format("2006-01-02 15:04:05.000000"),
		rec.Dir, arrow(&rec), rec.Kind)
	printField("id", string(rec.ID))
	printField("method", rec.Method)
	rec.Body = body
	printChain(src, &rec)
	printField("session", rec.Session)
	printField("size", sizeText(rec.Size))
	if rec.Latency > 0 {
		printField("latency", human.Duration(rec.Latency))
	}
	if names := rec.Flags.Names(); len(names) > 0 {
		printField("flags", strings.Join(names, ", "))
	}
	if rec.HTTP != nil {
		env, _ := json.Marshal(rec.HTTP)
		printField("http", string(env))
	}
	printFault(&rec)
	var pretty bytes.Buffer
	if json.Indent(&pretty, body, "", "  ") == nil {
		pretty.WriteByte('\n')
		_, err = os.Stdout.Write(pretty.Bytes())
		return err
	}
	fmt.Printf("%s\n", strconv.Quote(string(body)))
	return nil
}

// printFault says what acpscope did to the message, when it did something:
// which rule or who, what arrived and what went, when.
func printFault(rec *capture.Record) {
	f := rec.Fault
	if f == nil {
		return
	}
	printField("fault", f.String())
	switch f.Stage {
	case protocol.StageReplaced:
		printField("note", "this is what arrived; what went instead is the forwarded record of the same fault #"+strconv.FormatUint(f.ID, 10))
	case protocol.StageDropped:
		printField("note", "this arrived and was never delivered")
	case protocol.StageInjected:
		printField("note", "acpscope sent this; the other side never did")
	}
	if f.Arrived != 0 && f.Arrived != rec.Time {
		printField("arrived", time.Unix(0, f.Arrived).Local().Format("2006-01-02 15:04:05.000000")+", "+human.Duration(f.Held(rec.Time))+" before")
	}
}

func printField(name, value string) {
	if value != "" {
		fmt.Printf("  %-8s %s\n", name+":", value)
	}
}

// sizeText is a size as everywhere else, and in bytes when that rounds.
func sizeText(n int64) string {
	s := human.Size(n)
	if n >= 1024 {
		s += fmt.Sprintf(" (%d bytes)", n)
	}
	return s
}

// printChain says what a record carries beyond its own method: the
// proxy-chain wrapper around it, and the MCP message of an MCP-over-ACP
// request or of the answer to one (read with the request's bytes).
func printChain(src capture.Source, rec *capture.Record) {
	if rec.Hop > 0 {
		hop := protocol.HopLabel(rec.Hop)
		if in := protocol.Unwrap(&rec.Msg); in.Wrapper != "" {
			hop += " (carried in " + in.Wrapper + ")"
		} else if rec.Kind.IsResponse() {
			hop += " (answers a wrapped request)"
		}
		printField("chain", hop)
	}
	mcp, ok := protocol.DecodeMCP(&rec.Msg)
	if !ok && rec.Kind.IsResponse() && rec.Peer != 0 && protocol.MCPMethod(rec.Method) != "" {
		req, err := src.Record(rec.Peer)
		if err == nil {
			req.Body, err = src.Body(rec.Peer)
		}
		if err == nil {
			mcp, ok = protocol.DecodeMCPAnswer(&req.Msg, &rec.Msg)
		}
	}
	if !ok {
		return
	}
	printField("mcp", mcp.Summary())
	if mcp.Connection != "" && mcp.ACPMethod == "mcp/message" {
		printField("mcp conn", mcp.Connection)
	}
	if len(mcp.Arguments) > 0 {
		printField("mcp args", jsonLine(mcp.Arguments, 200))
	}
	if len(mcp.Result) > 0 {
		printField("mcp result", jsonLine(mcp.Result, 200))
	}
}

// jsonLine shows JSON on one line, cut to max runes.
func jsonLine(b []byte, max int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
