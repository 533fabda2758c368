package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// parseSize reads sizes such as 500MB, 2GiB or 1048576.
func parseSize(s string) (int64, error) {
	upper := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(upper, u.suffix) {
			upper, mult = strings.TrimSpace(strings.TrimSuffix(upper, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(upper, 64)
	if err != nil || n < 0 || math.IsNaN(n) {
		return 0, fmt.Errorf("%q is not a size; write e.g. 500MB, 2GiB or 1048576", s)
	}
	// Converted to int64, a float past its range (or infinite) turns
	// negative: a size that would, say, make gc delete everything.
	size := n * float64(mult)
	if size >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large a size; sizes go up to %d bytes", s, int64(math.MaxInt64))
	}
	return int64(size), nil
}
