package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

// unifiedText writes hunks as diff -u does, without the file names.
func unifiedText(oldText, newText string) string {
	var b strings.Builder
	for _, h := range Diff(oldText, newText, 3) {
		b.WriteString(h.Header() + "\n")
		for _, op := range h.Ops {
			b.WriteString(string(op.Kind) + op.Text)
			if !strings.HasSuffix(op.Text, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return b.String()
}

func numbered(from, to int, change map[int]string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString("line " + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "\n")
	}
	return b.String()
}

func TestUnifiedDiff(t *testing.T) {
	main := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n"
	tests := []struct {
		name, old, new string
		want           string // the whole diff, or with headersOnly its @@ lines
		headersOnly    bool
	}{
		{"equal", "a\nb\n", "a\nb\n", "", false},
		{"one line changed in the middle", main, strings.Replace(main, "hello, world", "hello, ACP", 1),
			"@@ -3,5 +3,5 @@\n import \"fmt\"\n \n func main() {\n-\tfmt.Println(\"hello, world\")\n+\tfmt.Println(\"hello, ACP\")\n }\n", false},
		{"new file", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n", false},
		{"deleted file", "a\nb\n", "", "@@ -1,2 +0,0 @@\n-a\n-b\n", false},
		{"insertion at the top", "a\nb\nc\nd\ne\n", "z\na\nb\nc\nd\ne\n", "@@ -1,3 +1,4 @@\n+z\n a\n b\n c\n", false},
		{"append at the end", "a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n", "@@ -3,3 +3,4 @@\n c\n d\n e\n+f\n", false},
		{"missing final newline", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", false},
		{"far apart changes make two hunks",
			numbered(1, 20, nil), numbered(1, 20, map[int]string{2: "two\n", 18: "eighteen\n"}),
			"@@ -1,5 +1,5 @@\n@@ -15,6 +15,6 @@\n", true},
		{"close changes share one hunk",
			numbered(1, 20, nil), numbered(1, 20, map[int]string{5: "five\n", 11: "eleven\n"}),
			"@@ -2,13 +2,13 @@\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unifiedText(tt.old, tt.new)
			if tt.headersOnly {
				var headers strings.Builder
				for _, l := range strings.SplitAfter(got, "\n") {
					if strings.HasPrefix(l, "@@") {
						headers.WriteString(l)
					}
				}
				got = headers.String()
			}
			if got != tt.want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			checkPatch(t, tt.old, tt.new)
		})
	}
}

// TestDiffIsShortest: Myers finds a shortest script, not just any.
func TestDiffIsShortest(t *testing.T) {
	tests := []struct {
		a, b  string
		edits int
	}{
		{"a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 5}, // the example of Myers' paper
		{"x\ny\n", "y\nx\n", 2},
		{"a\nb\nc\n", "a\nc\n", 1},
	}
	for _, tt := range tests {
		n := 0
		for _, op := range Script(Lines(tt.a), Lines(tt.b)) {
			if op.Kind != Equal {
				n++
			}
		}
		if n != tt.edits {
			t.Errorf("%q → %q: %d edits, want %d", tt.a, tt.b, n, tt.edits)
		}
	}
}

// TestDiffTooManyEdits: past MaxEdits the middle is replaced whole, and
// the script still turns old into new.
func TestDiffTooManyEdits(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < MaxEdits; i++ {
		a.WriteString("a" + strings.Repeat("x", i%7) + "\n")
		b.WriteString("b" + strings.Repeat("y", i%5) + "\n")
	}
	checkPatch(t, a.String(), b.String())
}

// checkPatch applies the diff of old and new to old and wants new.
func checkPatch(t *testing.T, oldText, newText string) {
	t.Helper()
	ops := Script(Lines(oldText), Lines(newText))
	var back, fwd strings.Builder
	for _, op := range ops {
		if op.Kind != Insert {
			back.WriteString(op.Text)
		}
		if op.Kind != Delete {
			fwd.WriteString(op.Text)
		}
	}
	if back.String() != oldText || fwd.String() != newText {
		t.Fatalf("the edit script of %q → %q reads back %q → %q", oldText, newText, back.String(), fwd.String())
	}
	for _, context := range []int{0, 1, 3} {
		got, err := applyHunks(Lines(oldText), Unified(ops, context))
		if err != nil {
			t.Fatalf("context %d: %v", context, err)
		}
		if s := strings.Join(got, ""); s != newText {
			t.Fatalf("context %d: patching %q gives %q, want %q", context, oldText, s, newText)
		}
	}
}

func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny\nz", "x\nq\nz\n")
	f.Add(numbered(1, 30, nil), numbered(1, 30, map[int]string{4: "", 9: "nine\n", 27: "a\nb\n"}))
	f.Fuzz(func(t *testing.T, oldText, newText string) {
		checkPatch(t, oldText, newText)
	})
}

// applyHunks patches old with hunks as patch(1) would, checking every
// context and removed line; it is how the tests know a diff is right.
func applyHunks(old []string, hunks []Hunk) ([]string, error) {
	var out []string
	at := 0 // next line of old to copy
	for _, h := range hunks {
		start := h.OldStart - 1
		if h.OldLen == 0 {
			start = h.OldStart
		}
		if start < at || start > len(old) {
			return nil, fmt.Errorf("hunk %s starts at line %d, outside %d..%d", h.Header(), start+1, at+1, len(old))
		}
		out = append(out, old[at:start]...)
		at = start
		for _, op := range h.Ops {
			switch op.Kind {
			case Equal, Delete:
				if at >= len(old) || old[at] != op.Text {
					return nil, fmt.Errorf("hunk %s: line %d does not match %q", h.Header(), at+1, op.Text)
				}
				at++
				if op.Kind == Equal {
					out = append(out, op.Text)
				}
			case Insert:
				out = append(out, op.Text)
			}
		}
	}
	return append(out, old[at:]...), nil
}
