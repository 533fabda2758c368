package capture

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/internal/human"
)

// This file parses the values of comparison terms: size>10KB,
// latency>2s, seq>=100.

// filterComparisons are the numeric fields that take <, <=, >, >= and =.
var filterComparisons = []string{"size", "latency", "seq", "hop"}

func parseFilterComparison(t filterToken) (filterNode, bool, error) {
	word := t.text
	for _, field := range filterComparisons {
		if !strings.HasPrefix(strings.ToLower(word), field) {
			continue
		}
		rest := word[len(field):]
		if rest == "" {
			if t.hasValue {
				return nil, false, nil
			}
			return nil, true, &FilterError{Pos: t.pos + len(word), Msg: fmt.Sprintf("expected a comparison after %s, written without spaces, e.g. %s", field, filterCompareExample(field))}
		}
		op, n := filterCompareOp(rest)
		if op == "" {
			return nil, false, nil
		}
		valPos := t.pos + len(field) + n
		val := rest[n:]
		if t.hasValue {
			val = t.value
		}
		c := &fCompareNode{field: field, op: op}
		var err error
		switch field {
		case "size":
			c.n, err = parseFilterSize(val)
		case "latency":
			var d time.Duration
			d, err = parseFilterLatency(val)
			c.n = int64(d)
		case "seq":
			c.n, err = strconv.ParseInt(val, 10, 64)
			if err != nil || c.n < 0 {
				err = fmt.Errorf("expected a sequence number, e.g. seq>100")
			}
		case "hop":
			c.n, err = strconv.ParseInt(val, 10, 64)
			if err != nil || c.n < 0 {
				err = fmt.Errorf("expected a proxy-chain hop, e.g. hop>0")
			}
		}
		if err != nil {
			return nil, true, &FilterError{Pos: valPos, Msg: err.Error()}
		}
		return c, true, nil
	}
	return nil, false, nil
}

func filterCompareExample(field string) string {
	switch field {
	case "size":
		return "size>10KB"
	case "latency":
		return "latency>2s"
	case "hop":
		return "hop>0"
	}
	return "seq>100"
}

func filterCompareOp(s string) (string, int) {
	for _, op := range []string{">=", "<=", ">", "<", "="} {
		if strings.HasPrefix(s, op) {
			return op, len(op)
		}
	}
	return "", 0
}

// parseFilterSize reads a byte count with an optional unit, as every
// size acpscope takes: 512, 10KB, 1.5MiB, 2k (a bare K is KiB).
func parseFilterSize(s string) (int64, error) {
	n, err := human.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("expected a size such as 512, 10KB, 2MiB; found %q", s)
	}
	return n, nil
}

// parseFilterLatency reads a Go duration (2s, 150ms, 1m30s) or a bare number of
// milliseconds.
func parseFilterLatency(s string) (time.Duration, error) {
	if ms, err := strconv.ParseFloat(s, 64); err == nil && ms >= 0 && ms < 1e12 {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("expected a duration such as 2s, 150ms or 500 (milliseconds); found %q", s)
	}
	return d, nil
}
