package cli

import (
	"path/filepath"
	"runtime/debug"
	"testing"

	flag "github.com/spf13/pflag"
)

// TestRecordingHeap: a proxy that records collects garbage at
// recordingHeap's pace; one that only forwards keeps the default, and
// so does one whose user set GOGC.
func TestRecordingHeap(t *testing.T) {
	tests := []struct {
		name    string
		capture bool
		gogc    string
		want    int
	}{
		{"recording", true, "", 25},
		{"forwarding only", false, "", 100},
		{"recording with GOGC set", true, "100", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			args := []string{"--quiet", "--no-capture"}
			if tt.capture {
				args = []string{"--quiet", "--capture", filepath.Join(t.TempDir(), "c.acpscope")}
			}
			fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
			stdioFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			debug.SetGCPercent(100)
			defer debug.SetGCPercent(100)
			if w := openCapture(fs, newMeta("stdio", "agent", []string{"agent"})); w != nil {
				defer w.Close()
			}
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Errorf("GC percent %d, want %d", got, tt.want)
			}
		})
	}
}
