package human

import (
	"math"
	"strconv"
	"testing"
	"time"
)

func TestSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {69_632, "68.0 KiB"},
		{2_300_000, "2.2 MiB"}, {5 << 30, "5.0 GiB"}, {math.MaxInt64, "8.0 EiB"},
	}
	for _, tt := range tests {
		if got := Size(tt.n); got != tt.want {
			t.Errorf("Size(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"500MB", 500_000_000, true},
		{"2GiB", 2 << 30, true},
		{"2 gib", 2 << 30, true},
		{"1.5k", 1536, true},
		{"0", 0, true},
		{"lots", 0, false},
		{"-1MB", 0, false},
		{"", 0, false},
		{"NaN", 0, false},
		{"inf", 0, false},
		{"1e30", 0, false},
		{"9.3e18", 0, false}, // once read as a negative size: gc would delete everything
		{"1e30GB", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{400 * time.Nanosecond, "0s"},
		{850 * time.Microsecond, "850µs"},
		{12_345 * time.Microsecond, "12.3ms"},
		{2_354 * time.Millisecond, "2.35s"},
		{2 * time.Second, "2s"},
		{90 * time.Second, "1m30s"},
		{2 * time.Minute, "2m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{2 * time.Hour, "2h"},
		{36 * time.Hour, "1d12h"},
		{30 * Day, "30d"},
		{2 * Week, "14d"},
		{-time.Second, "-1s"},
		{math.MinInt64, "-106751d23h47m16s"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"720h", 30 * Day, true},
		{"1ns", 1, true},
		{"7d", 7 * Day, true},
		{"2w", 2 * Week, true},
		{"1d12h", 36 * time.Hour, true},
		{"1w2d3h4m", Week + 2*Day + 3*time.Hour + 4*time.Minute, true},
		{"12h1d", 36 * time.Hour, true},
		{"1.5d", 36 * time.Hour, true},
		{" 30d ", 30 * Day, true},
		{"0", 0, true},
		{"-1d", -Day, true},
		{"500µs", 500 * time.Microsecond, true},
		{"", 0, false},
		{"7", 0, false},
		{"d", 0, false},
		{"7D", 0, false},
		{"7days", 0, false},
		{"1.2.3d", 0, false},
		{"1d-2h", 0, false},
		{"999999999w", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestShortID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"sess_1", "sess_1"},
		{"123456789012", "123456789012"},
		{"0f3c9a1e-7b2d-4c55-9e61-2a8d4f0b7c31", "0f3c9…0b7c31"},
		{"séssion-ünïcode-ïd", "séssi…ode-ïd"},
	}
	for _, tt := range tests {
		if got := ShortID(tt.in); got != tt.want {
			t.Errorf("ShortID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseDuration: no input panics, and what Duration writes for a
// parsed value reads back as that value rounded as Duration rounds it.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90s", "7d", "2w", "1d12h", "1.5d", "-3h", "0", "1e9w", "µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		text := Duration(d)
		back, err := ParseDuration(text)
		if err != nil {
			t.Fatalf("Duration(%v) = %q does not parse back: %v", d, text, err)
		}
		if again := Duration(back); again != text {
			t.Fatalf("%q → %v → %q → %v → %q", s, d, text, back, again)
		}
	})
}

// FuzzParseSize: whatever ParseSize accepts is a size, zero or more,
// that reads back the same when written in plain bytes.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"500MB", "2GiB", "1.5k", "1048576", "-1", "NaN", "Inf", "1e30", "9.3e18", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, a negative size", s, n)
		}
		if again, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || again != n {
			t.Fatalf("ParseSize(%q) = %d, but ParseSize(%d) = %d, %v", s, n, n, again, err)
		}
	})
}

// TestDurationFlag: the flag value reads what ParseDuration reads and
// writes what time.ParseDuration reads back exactly.
func TestDurationFlag(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2w", 2 * Week, true},
		{"1d12h", 36 * time.Hour, true},
		{"1234567ns", 1234567, true},
		{"7days", 0, false},
	}
	for _, tt := range tests {
		f := NewDurationFlag(time.Second)
		err := f.Set(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("Set(%q): %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			if f.Duration() != time.Second {
				t.Errorf("a failed Set(%q) changed the value to %v", tt.in, f.Duration())
			}
			continue
		}
		back, err := time.ParseDuration(f.String())
		if f.Duration() != tt.want || err != nil || back != tt.want {
			t.Errorf("Set(%q): %v, String %q reads back as %v, %v; want %v", tt.in, f.Duration(), f.String(), back, err, tt.want)
		}
	}
	if NewDurationFlag(0).Type() != "duration" {
		t.Error(`Type must be "duration" for pflag's GetDuration`)
	}
}
