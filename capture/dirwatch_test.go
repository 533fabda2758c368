package capture

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestDirWatcher: only captures that appear after the watcher started are
// handed out, each once, earliest started first, live or already
// finished, and only those that match.
func TestDirWatcher(t *testing.T) {
	dir := t.TempDir()
	create := func(name, agent string, start time.Time) *Writer {
		w, err := Create(filepath.Join(dir, name), WriterOptions{NoSync: true, Meta: Meta{Agent: agent, Start: start}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	now := time.Now()
	create("old.acpscope", "a", now.Add(-time.Hour)).Close()
	watcher, err := NewDirWatcher(dir, func(in Info) bool { return in.Meta.Agent == "a" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	create("other.acpscope", "b", now).Close() // another agent: never handed out
	live := create("live.acpscope", "a", now.Add(2*time.Second))
	create("gone.acpscope", "a", now.Add(time.Second)).Close() // came and went before anyone looked
	for _, want := range []struct {
		name string
		live bool
	}{{"gone.acpscope", false}, {"live.acpscope", true}} {
		in, err := watcher.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v, want %s", err, want.name)
		}
		if filepath.Base(in.Path) != want.name || in.Live != want.live {
			t.Errorf("Next = %s (live %v), want %s (live %v)", filepath.Base(in.Path), in.Live, want.name, want.live)
		}
	}
	live.Close()
	watcher.Skip(filepath.Join(dir, "picked.acpscope"))
	create("picked.acpscope", "a", now.Add(3*time.Second)).Close()
	short, stop := context.WithTimeout(ctx, 3*watchEvery)
	defer stop()
	if in, err := watcher.Next(short); err != context.DeadlineExceeded {
		t.Errorf("Next with nothing new = %s, %v; want to wait until the context ends", in.Path, err)
	}
}
