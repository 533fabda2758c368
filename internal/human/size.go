package human

import (
	"fmt"
	"strconv"
	"strings"
)

// Size formats a byte count the way ls -h would, in IEC units:
// 512 B, 68.0 KiB, 2.3 MiB.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// sizeUnits are the suffixes ParseSize reads, longest first so that KiB
// is not read as K. A bare K, M or G is binary, as in ls and du.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// maxSize bounds what ParseSize returns, far above any real size, so
// that the float conversion cannot overflow.
const maxSize = 1 << 62

// ParseSize reads sizes such as 500MB, 2GiB, 1.5k or 1048576; case and
// spaces before the unit do not matter.
func ParseSize(s string) (int64, error) {
	upper := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(upper, u.suffix) {
			upper, mult = strings.TrimSpace(strings.TrimSuffix(upper, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(upper, 64)
	if err != nil || !(n >= 0) || n*float64(mult) > maxSize {
		return 0, fmt.Errorf("%q is not a size; write e.g. 500MB, 2GiB or 1048576", s)
	}
	return int64(n * float64(mult)), nil
}
