package capture

import (
	"slices"
	"testing"
	"time"
)

func TestRetentionToDelete(t *testing.T) {
	now := time.Now()
	info := func(name string, age time.Duration, size int64, live bool) Info {
		return Info{Path: name, Size: size, Live: live, Meta: Meta{Start: now.Add(-age)}}
	}
	imported := func(name string, age time.Duration, size int64) Info {
		in := info(name, age, size, false)
		in.Meta.Notes = map[string]string{NoteImportedAt: now.Add(-time.Minute).UTC().Format(time.RFC3339)}
		return in
	}
	unreadable := info("unreadable", 0, 100, false)
	unreadable.Meta = Meta{}
	unreadable.Err = ErrCorrupt
	newestFirst := []Info{
		info("new", time.Hour, 100, false),
		info("live-old", 90*24*time.Hour, 100, true),
		info("mid", 10*24*time.Hour, 100, false),
		info("old", 40*24*time.Hour, 100, false),
		imported("imported-today", 400*24*time.Hour, 100),
	}
	tests := []struct {
		name     string
		infos    []Info
		maxTotal int64
		want     []string
	}{
		{"age only", newestFirst, 1 << 30, []string{"old"}},
		{"size too", newestFirst, 350, []string{"old", "mid"}},
		{"never the live one", newestFirst, 0, []string{"old", "mid", "new", "imported-today"}},
		{"unreadable kept while there is room", append(slices.Clone(newestFirst), unreadable), 1 << 30, []string{"old"}},
		{"unreadable goes first for room", append(slices.Clone(newestFirst), unreadable), 450, []string{"unreadable", "old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Retention{MaxAge: 30 * 24 * time.Hour, MaxTotal: tt.maxTotal}.ToDelete(tt.infos, now)
			var names []string
			for _, in := range got {
				names = append(names, in.Path)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("got %q, want %q", names, tt.want)
			}
		})
	}
}
