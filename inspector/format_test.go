package inspector

import (
	"strings"
	"testing"
	"time"
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

func TestHumanUnits(t *testing.T) {
	sizes := []struct {
		n    int64
		want string
	}{{0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {2_300_000, "2.3 MB"}, {5_000_000_000, "5.0 GB"}}
	for _, s := range sizes {
		if got := humanSize(s.n); got != s.want {
			t.Errorf("humanSize(%d) = %q, want %q", s.n, got, s.want)
		}
	}
	durs := []struct {
		d    time.Duration
		want string
	}{{500 * time.Microsecond, "500µs"}, {25 * time.Millisecond, "25.0ms"}, {2200 * time.Millisecond, "2.20s"},
		{90 * time.Second, "1m30s"}, {2 * time.Hour, "2h00m"}, {-time.Second, "-1.00s"}}
	for _, d := range durs {
		if got := shortDuration(d.d); got != d.want {
			t.Errorf("shortDuration(%v) = %q, want %q", d.d, got, d.want)
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
