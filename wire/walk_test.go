package wire

import (
	"runtime"
	"strings"
	"testing"
)

func TestWalk(t *testing.T) {
	doc := ` {"a":[1,{"b\u0022":"x"}],"c":null} `
	var got []string
	err := Walk([]byte(doc), func(path []string, start, end int) bool {
		got = append(got, strings.Join(path, ".")+"="+doc[start:end])
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`={"a":[1,{"b\u0022":"x"}],"c":null}`,
		`a=[1,{"b\u0022":"x"}]`,
		`a.0=1`,
		`a.1={"b\u0022":"x"}`,
		`a.1.b"="x"`,
		`c=null`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk visited\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	skipped := 0
	Walk([]byte(doc), func(path []string, _, _ int) bool { skipped++; return len(path) == 0 })
	if skipped != 3 {
		t.Errorf("returning false should skip children: visited %d values, want 3", skipped)
	}
	if err := Walk([]byte(`{"a":`), func([]string, int, int) bool { return true }); err != ErrNotJSON {
		t.Errorf("Walk of invalid JSON = %v, want ErrNotJSON", err)
	}
}

// TestWalkDeepPathMemory: each level's path extends its parent's instead
// of copying it, so a deeply nested document costs memory in proportion to
// its depth, not its square.
func TestWalkDeepPathMemory(t *testing.T) {
	const depth = 4096
	doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	visited := 0
	if err := Walk(doc, func(path []string, _, _ int) bool {
		if len(path) != visited {
			t.Fatalf("value %d has a path of %d elements", visited, len(path))
		}
		visited++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if visited != depth {
		t.Fatalf("visited %d values, want %d", visited, depth)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("walking %d nested arrays allocated %d MiB", depth, alloc>>20)
	}
}

func TestMembersAndElements(t *testing.T) {
	var got []string
	Members([]byte(`{"a" : 1, "b\u0022":[2, 3], "c":{}}`), func(key, value []byte) bool {
		got = append(got, string(key)+"="+string(value)+"|"+Unquote(key))
		return string(value) != "[2, 3]" // stop after the second member
	})
	want := []string{`"a"=1|a`, `"b\u0022"=[2, 3]|b"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Members gave %q, want %q", got, want)
	}
	var els []string
	Elements([]byte(`[ 1 ,"x", {"y":[]} ]`), func(el []byte) bool { els = append(els, string(el)); return true })
	if strings.Join(els, "|") != `1|"x"|{"y":[]}` {
		t.Errorf("Elements gave %q", els)
	}
	if Unquote([]byte(`7`)) != "" || Unquote([]byte(`"\u00e9"`)) != "é" {
		t.Error("Unquote")
	}
}
