package inspector

import "testing"

// TestStartAtSeq: Options.Seq opens the capture at that message, as
// acpscope search --open does.
func TestStartAtSeq(t *testing.T) {
	for _, tt := range []struct {
		name string
		seq  uint64
		want string
	}{
		{"a message", 3, "#3 pretty"},
		{"past the end", 99, "message #99 is not in this capture"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := startUI(t, Options{source: demoSource(), Seq: tt.seq})
			h.resize(100, 24)
			h.waitFor(tt.want)
		})
	}
}
