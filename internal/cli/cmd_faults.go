package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	flag "github.com/spf13/pflag"
)

// faultsHelp is `acpscope faults`'s synopsis, examples and flags.
func faultsHelp() help {
	return help{
		usage: "--check PLAN [CAPTURE] | --list | --show NAME | --from CAPTURE",
		example: `  acpscope faults --list                          # the ready-made plans
  acpscope faults --from latest > again.yaml      # the plan a capture ran with, its seed pinned
  acpscope faults --show slow-agent > slow.yaml    # start a plan from one
  acpscope faults --check plan.yaml                # is it valid?
  acpscope faults --check plan.yaml latest         # and what would each rule act on in a capture?

A plan is YAML: an optional seed (random choices repeat with it), then
rules tried in order for every message; the first rule whose filter
matches (and whose after/times/probability let it act) acts on it.

  seed: 42
  rules:
    - name: slow-updates
      match: dir:agent and method:session/update    # the filter language of dump --filter
      after: 2          # let the first 2 matches through
      times: 5          # act on at most 5
      probability: 0.3  # act on a match with this chance
      delay: 100ms..2s  # or 500ms; the direction waits, order is kept
      drop: true
      duplicate: 1      # extra copies
      reorder: 3        # shuffle matches within windows of 3 (500ms at most)
      rewrite: {params.update.sessionUpdate: bogus}   # JSON path: value
      replace: '{"jsonrpc":"2.0","id":{{id}},"error":{"code":-1,"message":"x"}}'
      pad: {path: params.update.content.text, size: 50MiB}
      truncate: 60      # keep the first 60 bytes
      corrupt: 3        # overwrite 3 random bytes
      answer: {result: {outcome: {outcome: cancelled}}}   # reply in the other side's place
      inject: {to: agent, message: {jsonrpc: "2.0", method: session/cancel, params: {sessionId: "{{sessionId}}"}}}
      close: true       # end the connection after this message
      kill: true        # kill the agent after this message

{{id}}, {{sessionId}} and {{method}} in replace, answer and inject are the
matched message's. Run it with: acpscope --faults plan.yaml -- AGENT…`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.String("check", "", "validate the plan `PLAN` (a file or a ready-made name); with a CAPTURE, say what each rule would act on")
			fs.Bool("list", false, "list the ready-made plans")
			fs.String("show", "", "print the ready-made plan `NAME`")
			fs.String("from", "", "print the plan the run of `CAPTURE` applied, with its seed, to run it again")
		},
	}
}

func runFaults(fs *flag.FlagSet, args []string) (int, error) {
	check, _ := fs.GetString("check")
	list, _ := fs.GetBool("list")
	show, _ := fs.GetString("show")
	switch {
	case list:
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		for _, name := range fault.Builtins() {
			src, _ := fault.Builtin(name)
			fmt.Fprintf(tw, "%s\t%s\n", name, fault.Summary(src))
		}
		return 0, tw.Flush()
	case show != "":
		src, ok := fault.Builtin(show)
		if !ok {
			return 2, usageErrorf("no ready-made plan %q: %s", show, strings.Join(fault.Builtins(), ", "))
		}
		_, err := os.Stdout.Write(src)
		return 0, err
	case fs.Changed("from"):
		from, _ := fs.GetString("from")
		return planFrom(fs, from)
	case check == "":
		return 2, usageErrorf("give --check PLAN, --list, --show NAME or --from CAPTURE")
	}
	plan, err := fault.Load(check)
	if err != nil {
		return 1, err
	}
	fmt.Printf("%s: %d rules, valid\n", plan.Name, len(plan.Rules))
	if len(args) == 0 {
		for _, r := range plan.Rules {
			fmt.Printf("  %-24s line %d, matches %s\n", r.Name, r.Line, orAll(r.Match.Source()))
		}
		return 0, nil
	}
	return checkAgainst(fs, args, plan)
}

func orAll(s string) string {
	if s == "" {
		return "every message"
	}
	return s
}

// checkAgainst says what each rule would act on in a capture.
func checkAgainst(fs *flag.FlagSet, args []string, plan *fault.Plan) (int, error) {
	path, err := oneCapture(fs, args)
	if err != nil {
		return captureErrCode(err), err
	}
	src, err := capture.OpenComplete(path)
	if err != nil {
		return captureErrCode(err), err
	}
	defer src.Close()
	checks, err := fault.Check(plan, src)
	if err != nil {
		return 1, err
	}
	fmt.Printf("against %s (seed %d):\n", captureRef(path), plan.Seed)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tLINE\tMATCHES\tACTS ON\tFIRST SEQS")
	for _, c := range checks {
		seqs := make([]string, len(c.Seqs))
		for i, s := range c.Seqs {
			seqs[i] = fmt.Sprint(s)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", c.Rule.Name, c.Rule.Line, c.Matched, c.Acted, strings.Join(seqs, " "))
	}
	return 0, tw.Flush()
}

// planFrom prints the plan a capture's run applied, its seed pinned, so
// that running the same agent with it again redoes the same faults.
func planFrom(fs *flag.FlagSet, name string) (int, error) {
	path, err := oneCapture(fs, []string{name})
	if err != nil {
		return captureErrCode(err), err
	}
	src, err := capture.OpenComplete(path)
	if err != nil {
		return captureErrCode(err), err
	}
	defer src.Close()
	notes := src.Meta().Notes
	text, ok := notes[noteFaultPlan]
	if !ok {
		return 1, fmt.Errorf("%s was not made with --faults", captureRef(path))
	}
	if seed := notes[noteFaultSeed]; seed != "" && !strings.Contains(text, "\nseed:") && !strings.HasPrefix(text, "seed:") {
		text = "seed: " + seed + " # chosen by the run of " + captureRef(path) + "\n" + text
	}
	_, err = fmt.Print(text)
	return 0, err
}
