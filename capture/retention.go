package capture

import (
	"slices"
	"time"
)

// Retention is how much of a capture directory gc keeps.
type Retention struct {
	// MaxAge: finished captures started (or imported) longer ago go.
	MaxAge time.Duration
	// MaxTotal: then the oldest finished captures go until the rest fit
	// in this many bytes.
	MaxTotal int64
}

// ToDelete chooses what r deletes from infos (as List returns them) at
// now, oldest first. A live capture is never chosen: its proxy is still
// writing it. An unreadable one has no known age and goes only to make
// room.
func (r Retention) ToDelete(infos []Info, now time.Time) []Info {
	cutoff := now.Add(-r.MaxAge)
	var total int64
	for _, in := range infos {
		total += in.Size
	}
	oldestFirst := slices.Clone(infos)
	slices.SortStableFunc(oldestFirst, func(a, b Info) int { return lastTouched(a).Compare(lastTouched(b)) })
	var doomed []Info
	for _, in := range oldestFirst {
		if in.Live {
			continue
		}
		tooOld := in.Err == nil && lastTouched(in).Before(cutoff)
		if tooOld || total > r.MaxTotal {
			doomed = append(doomed, in)
			total -= in.Size
		}
	}
	return doomed
}

// lastTouched is when a capture started or was imported, whichever is
// later: a capture imported today from last year's bug report is as new
// as its import. (Not the file's mtime: storing lint findings moves it.)
func lastTouched(in Info) time.Time {
	if t, err := time.Parse(time.RFC3339, in.Meta.Notes[NoteImportedAt]); err == nil && t.After(in.Meta.Start) {
		return t
	}
	return in.Meta.Start
}
