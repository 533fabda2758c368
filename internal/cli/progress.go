package cli

import (
	"fmt"
	"io"
	"time"
)

// progress tells on stderr how far a long run over the captures is, and
// stays quiet for a short one. On a terminal it keeps one line up to
// date; elsewhere (a log, a CI job) it writes a line now and then.
// Results on stdout are flushed before it draws, and clear wipes its
// terminal line before a result is printed over it.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	flush func() // flushes stdout
	now   func() time.Time

	start, drawn time.Time
	shown        bool // a terminal line is on screen
}

// When progress starts to show, and how often it is redrawn.
const (
	progressTTYAfter  = 500 * time.Millisecond
	progressTTYEvery  = 100 * time.Millisecond
	progressLineEvery = 5 * time.Second
)

func newProgress(w io.Writer, tty bool, total int, flush func()) *progress {
	p := &progress{w: w, tty: tty, total: total, flush: flush, now: time.Now}
	p.start = p.now()
	return p
}

// report says done of total captures are searched, with hits so far,
// and which one is being searched now, if it is time to say so.
func (p *progress) report(done, hits int, current string) {
	now := p.now()
	after, every := progressLineEvery, progressLineEvery
	if p.tty {
		after, every = progressTTYAfter, progressTTYEvery
	}
	if now.Sub(p.start) < after || now.Sub(p.drawn) < every {
		return
	}
	p.drawn = now
	p.flush()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[Ksearching %d/%d captures, %d hits: %s", done+1, p.total, hits, current)
		p.shown = true
		return
	}
	fmt.Fprintf(p.w, "acpscope search: %d of %d captures searched, %d hits so far, searching %s\n", done, p.total, hits, current)
}

// clear removes the terminal line, if one is shown.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
