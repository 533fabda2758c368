package main

import (
	"strconv"
	"testing"
)

// FuzzParseSize: whatever parseSize accepts is a size, zero or more, that
// it reads back the same when written in plain bytes.
func FuzzParseSize(f *testing.F) {
	seeds := []string{"1048576", "500MB", "2GiB", "1.5k", " 3 kib ", "0", "2GB", "lots", "-1MB", "1e3",
		"NaN", "Inf", "1e30", "9.3e18"} // the last four once read as negative sizes
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d, a negative size", s, n)
		}
		if again, err := parseSize(strconv.FormatInt(n, 10)); err != nil || again != n {
			t.Fatalf("parseSize(%q) = %d, but parseSize(%d) = %d, %v", s, n, n, again, err)
		}
	})
}
