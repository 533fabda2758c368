package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/human"
	flag "github.com/spf13/pflag"
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

// TestDurationFlagsTakeDaysAndWeeks: every duration flag of every
// command reads 1d12h and 2w as gc --older-than does, reads back exactly
// through GetDuration, and shows its default as human.Duration writes it.
func TestDurationFlagsTakeDaysAndWeeks(t *testing.T) {
	seen := 0
	for _, c := range commands() {
		fs := newFlagSet(c, c.help())
		fs.VisitAll(func(f *flag.Flag) {
			if f.Value.Type() != "duration" {
				return
			}
			seen++
			t.Run(c.name+"/"+f.Name, func(t *testing.T) {
				if _, err := human.ParseDuration(f.DefValue); err != nil {
					t.Errorf("default %q does not read back: %v", f.DefValue, err)
				}
				for _, tt := range []struct {
					in   string
					want time.Duration
				}{{"2w", 2 * human.Week}, {"1d12h", 36 * time.Hour}, {"1500ms", 1500 * time.Millisecond}} {
					// A ranged flag reads the same forms, and refuses values
					// outside its range by naming it.
					if r, ok := f.Value.(*rangedDuration); ok && (tt.want < r.lo || tt.want > r.hi) {
						if err := fs.Set(f.Name, tt.in); err == nil || !strings.Contains(err.Error(), "outside the range") {
							t.Errorf("--%s %s: %v, want it refused as outside the range", f.Name, tt.in, err)
						}
						continue
					}
					if err := fs.Set(f.Name, tt.in); err != nil {
						t.Fatalf("--%s %s: %v", f.Name, tt.in, err)
					}
					if got, err := fs.GetDuration(f.Name); err != nil || got != tt.want {
						t.Errorf("--%s %s reads back as %v, %v; want %v", f.Name, tt.in, got, err, tt.want)
					}
				}
			})
		})
	}
	if seen < 8 { // grace ×3, keepalive, idle-timeout, delay, timeout, older-than
		t.Errorf("found %d duration flags, want at least 8", seen)
	}
}
