package cli

import (
	"strings"
	"testing"
)

// TestCmdBenchInput checks that bench refuses what it used to take
// silently (unknown setups dropped, a zero count read as the default, a
// negative count printed in the table), keeps its documented sentinels,
// and that every progress line says who is talking.
func TestCmdBenchInput(t *testing.T) {
	tiny := []string{"--rtt", "10", "--msgs", "50", "--big-count", "1", "--big-size", "1000", "--reps", "1",
		"--rss-size", "0", "--paced-msgs", "-1", "--paced-mb", "-1", "--rtt-runs", "1", "--echo", "0", "--sync-probe", "0"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown setup", []string{"--setups", "z"}, 2, `--setups: unknown setup "z"; the setups are a (direct pipe)`},
		{"one unknown among known", []string{"--setups", "a,q"}, 2, `unknown setup "q"`},
		{"empty setup", []string{"--setups", "a,"}, 2, `unknown setup ""`},
		{"zero msgs", []string{"--msgs", "0"}, 2, "--msgs must be a positive number, got 0"},
		{"negative rtt", []string{"--rtt", "-5"}, 2, "--rtt must be a positive number, got -5"},
		{"zero reps", []string{"--reps", "0"}, 2, "--reps must be a positive number"},
		{"negative rss size", []string{"--rss-size", "-1"}, 2, "--rss-size must be a size in bytes, or 0 to skip"},
		{"zero paced rate", []string{"--paced-msgs", "0"}, 2, "--paced-msgs must be a rate above 0, or negative to skip"},
		{"zero rtt runs", []string{"--rtt-runs", "0"}, 2, "--rtt-runs must be a positive number, got 0"},
		{"negative echo size", []string{"--echo", "-5"}, 2, "--echo takes sizes in bytes, or 0 to skip, got -5"},
		{"negative sync probe", []string{"--sync-probe", "-1"}, 2, "--sync-probe must be a size in bytes, or 0 to skip"},
		{"empty peer", []string{"--peer", " "}, 2, "--peer needs a command line"},
		{"sentinels accepted", append([]string{"--setups", "a,e"}, tiny...), 0, "acpscope bench: round trips, run 1 of 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench"}, tt.args...)
			if tt.code != 0 {
				args = append(args, tiny...)
				args = append(args, tt.args...) // the flag under test wins
			}
			stdout, stderr, code := acpscope(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if tt.code != 0 {
				if stdout != "" {
					t.Errorf("printed a table for bad input:\n%s", stdout)
				}
				return
			}
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(l, "acpscope bench: ") {
					t.Errorf("progress line %q does not start with 'acpscope bench: '", l)
				}
			}
			if !strings.Contains(stdout, "(a) direct pipe") || !strings.Contains(stdout, "(e) acpscope, --no-capture") || !strings.Contains(stdout, "RSS: skipped") {
				t.Errorf("table:\n%s", stdout)
			}
		})
	}
}
