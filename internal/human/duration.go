package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Day and Week are the units Duration and ParseDuration add to Go's.
const (
	Day  = 24 * time.Hour
	Week = 7 * Day
)

// Duration rounds d to what a person wants to read (µs below a
// millisecond, 0.1 ms below a second, 10 ms below a minute, then whole
// seconds) and writes it as Go does, with days for a day or more and
// without trailing zero units: 850µs, 12.3ms, 2.35s, 1m30s, 2m, 1d12h,
// 30d. ParseDuration reads it back.
func Duration(d time.Duration) string {
	switch {
	case d == math.MinInt64:
		return "-" + Duration(math.MaxInt64)
	case d < 0:
		return "-" + Duration(-d)
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	if r := d.Round(time.Second); r%time.Second == 0 {
		d = r
	} else {
		d = d.Truncate(time.Second) // rounding up would overflow
	}
	s := ""
	if days := d / Day; days > 0 {
		s = strconv.FormatInt(int64(days), 10) + "d"
		d -= days * Day
	}
	if d > 0 {
		s += trimZeroUnits(d.String())
	}
	return s
}

// trimZeroUnits drops the zero minutes and seconds Go writes after a
// larger unit: 12h0m0s is 12h, 5m0s is 5m; 1h0m5s stays.
func trimZeroUnits(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseDuration reads what time.ParseDuration reads, and days (d) and
// weeks (w) too, alone or mixed: 90s, 36h, 7d, 2w, 1d12h, 1.5d.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration; write e.g. 90s, 36h, 7d or 2w", s)
	in := strings.TrimSpace(s)
	sign, rest := time.Duration(1), in
	if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
	}
	switch rest {
	case "":
		return 0, bad
	case "0":
		return 0, nil
	}
	var days float64
	var goUnits strings.Builder // the parts time.ParseDuration reads
	for rest != "" {
		num := len(rest) - len(strings.TrimLeft(rest, "0123456789."))
		unit := len(rest[num:]) - len(strings.TrimLeft(rest[num:], "abcdefghijklmnopqrstuvwxyzµμ"))
		if num == 0 || unit == 0 {
			return 0, bad
		}
		switch rest[num : num+unit] {
		case "d", "w":
			n, err := strconv.ParseFloat(rest[:num], 64)
			if err != nil {
				return 0, bad
			}
			if rest[num] == 'w' {
				n *= 7
			}
			days += n
		default:
			goUnits.WriteString(rest[:num+unit])
		}
		rest = rest[num+unit:]
	}
	var d time.Duration
	if goUnits.Len() > 0 {
		var err error
		if d, err = time.ParseDuration(goUnits.String()); err != nil {
			return 0, bad
		}
	}
	if days*float64(Day) > float64(math.MaxInt64-d) {
		return 0, bad
	}
	return sign * (d + time.Duration(days*float64(Day))), nil
}
