package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandList checks the list: one entry per name, each runnable,
// its flags declarable (pflag panics on a flag declared twice), one-line
// summaries, a synopsis, and the commands acpscope runs itself present.
func TestCommandList(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if seen[c.name] {
				t.Fatalf("%q is listed twice", c.name)
			}
			seen[c.name] = true
			if c.run == nil || c.help == nil {
				t.Fatalf("%q has no run or no help", c.name)
			}
			if c.summary == "" || strings.Contains(c.summary, "\n") {
				t.Errorf("summary %q: want one line", c.summary)
			}
			h := c.help()
			if h.usage == "" {
				t.Errorf("no synopsis")
			}
			newFlagSet(c, h)
		})
	}
	for _, name := range []string{"stdio", "bench-peer", "demo-agent", "demo-client"} {
		if !seen[name] {
			t.Errorf("%q is missing: acpscope runs it itself", name)
		}
	}
}

// TestHelpGolden pins the overview and every command's --help, byte for
// byte: users and scripts read them, and a flag's wording or default
// changing should be a decision (rerun with -update-cmd when it is).
func TestHelpGolden(t *testing.T) {
	var out bytes.Buffer
	if code := Main([]string{"--help"}, &out, &out); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	goldenCmd(t, "help/overview.txt", out.Bytes())
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main([]string{"help", c.name}, &out, &errOut); code != 0 || errOut.Len() > 0 {
				t.Fatalf("help %s: exit %d, stderr %q", c.name, code, errOut.String())
			}
			goldenCmd(t, "help/"+c.name+".txt", out.Bytes())
		})
	}
}
