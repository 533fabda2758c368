package main

import (
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

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
		{"NaN", 0, false},
		{"inf", 0, false},
		{"1e30", 0, false},
		{"9.3e18", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestPickGarbage(t *testing.T) {
	now := time.Now()
	info := func(name string, age time.Duration, size int64, live bool) capture.Info {
		return capture.Info{Path: name, Size: size, Live: live, Meta: capture.Meta{Start: now.Add(-age)}}
	}
	imported := func(name string, age time.Duration, size int64) capture.Info {
		in := info(name, age, size, false)
		in.Meta.Notes = map[string]string{capture.NoteImportedAt: now.Add(-time.Minute).UTC().Format(time.RFC3339)}
		return in
	}
	newestFirst := []capture.Info{
		info("new", time.Hour, 100, false),
		info("live-old", 90*24*time.Hour, 100, true),
		info("mid", 10*24*time.Hour, 100, false),
		info("old", 40*24*time.Hour, 100, false),
		imported("imported-today", 400*24*time.Hour, 100),
	}
	tests := []struct {
		name     string
		maxTotal int64
		want     []string
	}{
		{"age only", 1 << 30, []string{"old"}},
		{"size too", 350, []string{"old", "mid"}},
		{"never the live one", 0, []string{"old", "mid", "new", "imported-today"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pickGarbage(newestFirst, now.Add(-30*24*time.Hour), tt.maxTotal)
			var names []string
			for _, in := range got {
				names = append(names, in.Path)
			}
			if len(names) != len(tt.want) {
				t.Fatalf("got %q, want %q", names, tt.want)
			}
			for i := range names {
				if names[i] != tt.want[i] {
					t.Fatalf("got %q, want %q", names, tt.want)
				}
			}
		})
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
