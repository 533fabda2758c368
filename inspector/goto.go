package inspector

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSeq reads a message number as typed after ':' ("12" or "#12").
func parseSeq(text string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimSpace(text), "#")
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a message number; type one such as 12", text)
	}
	return n, nil
}

// gotoSeq selects the message numbered text; a filter or the marked-only
// view that hides it is left, and says so.
func (cv *captureView) gotoSeq(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	seq, err := parseSeq(text)
	if err != nil {
		cv.message = err.Error()
		return
	}
	if last := cv.src.Last(); seq > last {
		cv.message = fmt.Sprintf("there is no message #%d: this capture has %d so far", seq, last)
		return
	}
	hidden := ""
	if _, ok := cv.rows.indexOf(seq); !ok {
		switch {
		case cv.markedOnly:
			hidden = "marked-only view"
		case cv.filter != nil:
			hidden = "filter"
		}
	}
	cv.selectSeq(seq)
	cv.message = fmt.Sprintf("message #%d", seq)
	if hidden != "" {
		cv.message += ": left the " + hidden + " that hid it"
	}
}
