package cli

import "testing"

func TestGCSummary(t *testing.T) {
	tests := []struct {
		dryRun bool
		want   string
	}{
		{true, "would delete 2 of 5 captures, 3.0 KiB"},
		{false, "deleted 2 of 5 captures, 3.0 KiB"},
	}
	for _, tt := range tests {
		if got := gcSummary(tt.dryRun, 2, 5, 3072); got != tt.want {
			t.Errorf("gcSummary(dryRun=%v) = %q, want %q", tt.dryRun, got, tt.want)
		}
	}
}
