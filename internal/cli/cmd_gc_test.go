package cli

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"500MB", 500_000_000, true},
		{"2GiB", 2 << 30, true},
		{"1.5k", 1536, true},
		{"lots", 0, false},
		{"-1MB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

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
