package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
)

func TestNewName(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 34, 56, 0, time.FixedZone("x", 3600))
	tests := []struct{ agent, want string }{
		{"claude-code-acp", "20261121T113456Z-claude-code-acp-42.acpscope"},
		{"/usr/bin/gemini --experimental-acp", "20261121T113456Z-gemini-experimental-acp-42.acpscope"},
		{"", "20261121T113456Z-agent-42.acpscope"},
		{"../../etc", "20261121T113456Z-etc-42.acpscope"},
	}
	for _, tt := range tests {
		if got := NewName(tt.agent, start, 42); got != tt.want {
			t.Errorf("NewName(%q) = %q, want %q", tt.agent, got, tt.want)
		}
	}
	m := nameInfo("/x/" + tests[0].want)
	if m.Agent != "claude-code-acp" || m.Pid != 42 || !m.Start.Equal(start) {
		t.Errorf("nameInfo = %+v", m)
	}
}

func TestListResolveFindings(t *testing.T) {
	dir := t.TempDir()
	names := []string{
		NewName("alpha", time.Now().Add(-2*time.Hour), 1),
		NewName("beta", time.Now().Add(-time.Hour), 2),
		NewName("beta", time.Now(), 3),
	}
	for i, n := range names {
		path := filepath.Join(dir, n)
		t.Cleanup(func() { checkDB(t, path) })
		w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true,
			Meta: Meta{Agent: strings.Split(n, "-")[1], Start: time.Now().Add(time.Duration(i-2) * time.Hour)}})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j <= i; j++ {
			w.Chunk(0, StreamAgent, 1, []byte(notif(j)+"\n"))
		}
		w.Close()
	}
	os.WriteFile(filepath.Join(dir, "broken"+Ext), []byte("nope"), 0o600)
	live, err := Create(filepath.Join(dir, NewName("gamma", time.Now().Add(time.Hour), 4)), WriterOptions{NoSync: true, Meta: Meta{Agent: "gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close(); checkDB(t, live.Path()) })

	infos, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 5 {
		t.Fatalf("List gave %d captures", len(infos))
	}
	if !infos[0].Live || infos[0].Meta.Agent != "gamma" {
		t.Errorf("newest = %+v, want the live gamma capture", infos[0])
	}
	var broken int
	for _, in := range infos {
		if in.Err != nil {
			broken++
			if !errors.Is(in.Err, ErrCorrupt) {
				t.Errorf("broken file listed with %v", in.Err)
			}
		}
	}
	if broken != 1 || infos[1].Messages != 3 || filepath.Base(infos[1].Path) != names[2] {
		t.Errorf("listing: %d broken, second %s with %d messages", broken, infos[1].Path, infos[1].Messages)
	}

	tests := []struct {
		name    string
		want    string // base name; "" means an error
		errWord string
	}{
		{"latest", filepath.Base(live.Path()), ""},
		{names[0], names[0], ""},
		{strings.TrimSuffix(names[0], Ext), names[0], ""},
		{"alpha", names[0], ""},
		{"beta", "", "matches 2"},
		{"zeta", "", "acpscope ls"},
		{filepath.Join(dir, names[1]), names[1], ""},
		{filepath.Join(dir, "missing"+Ext), "", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(dir, tt.name)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWord) {
					t.Errorf("Resolve = %q, %v; want an error saying %q", got, err, tt.errWord)
				}
				return
			}
			if err != nil || filepath.Base(got) != tt.want {
				t.Errorf("Resolve = %q, %v; want %s", got, err, tt.want)
			}
		})
	}

	path := filepath.Join(dir, names[1])
	fs := []protocol.Finding{{Rule: "jsonrpc/version", Severity: protocol.Error, Message: "bad", Seqs: []uint64{1}}}
	if err := SaveFindings(path, fs); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, path)
	got, err := r.Findings()
	if err != nil || len(got) != 1 || got[0].Rule != "jsonrpc/version" {
		t.Errorf("Findings = %+v, %v", got, err)
	}
	if err := SaveFindings(live.Path(), fs); !errors.Is(err, ErrLive) {
		t.Errorf("SaveFindings on a live capture = %v, want ErrLive", err)
	}

	src, err := OpenSource(live.Path())
	if err != nil {
		t.Fatalf("OpenSource(live) = %v", err)
	}
	if _, ok := src.(*Live); !ok {
		t.Errorf("OpenSource(live) gave %T", src)
	}
	src.Close()
	src, err = OpenSource(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := src.(*Reader); !ok {
		t.Errorf("OpenSource(finished) gave %T", src)
	}
	src.Close()
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "captures")
	path := filepath.Join(dir, "p"+Ext)
	t.Cleanup(func() { checkDB(t, path) })
	w, err := Create(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {path, 0o600}, {socketPath(t, path), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s has mode %v, want %v", c.path, got, c.want)
		}
	}
	if _, err := Create(path, WriterOptions{NoSync: true, NoFeed: true}); err == nil {
		t.Error("Create overwrote an existing capture")
	}
}
