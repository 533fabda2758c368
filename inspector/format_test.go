package inspector

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"crlf\r", `crlf\r`},
		{"tab\there", `tab\there`},
		{"bell\x07", `bell\u0007`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"esc \x1b[31m", `esc \u001b[31m`},
		{"héllo ✓", "héllo ✓"},
		{"c1 \u0085", `c1 \u0085`},
	}
	for _, tt := range tests {
		if got := printable([]byte(tt.in)); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	lines := wrapText("the quick brown fox jumps over the lazy dog\nsecond paragraph", 12)
	for _, l := range lines {
		if len([]rune(l)) > 12 {
			t.Errorf("line %q is wider than 12", l)
		}
	}
	if got := strings.Join(lines, " "); got != "the quick brown fox jumps over the lazy dog second paragraph" {
		t.Errorf("wrapping lost or changed words: %q", got)
	}
	if lines := wrapText(strings.Repeat("x", 30), 10); len(lines) != 3 {
		t.Errorf("a long word is not cut: %q", lines)
	}
}
