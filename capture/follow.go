package capture

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// FollowOptions says where Follow starts and whom it hands records to.
type FollowOptions struct {
	// From is the first sequence number handed over (0 counts as 1).
	From uint64
	// HoldLimit bounds the bytes a live feed holds ahead of Record (see
	// Live.SetHoldLimit); 0 keeps the feed's own limit.
	HoldLimit int64
	// Record receives each record in sequence order, body loaded; an
	// error ends Follow with it. Holes (records the proxy could not
	// commit, and said so) are skipped.
	Record func(*Record) error
	// CaughtUp, if set, runs each time every record that has arrived so
	// far has been handed over: the place to flush output.
	CaughtUp func() error
	// Resumed, if set, is told when a feed that cut the follower off
	// (it fell behind and the proxy gave up on it) was dialled again,
	// from record at.
	Resumed func(at uint64, cause error)
}

// FollowEnd says how Follow ended.
type FollowEnd int

const (
	// FollowFinished: the source was a finished capture, or the proxy
	// finished while followed and its feed handed over everything.
	FollowFinished FollowEnd = iota
	// FollowStopped: the context was cancelled.
	FollowStopped
	// FollowFromFile: the feed ended early (the follower fell behind as
	// the proxy exited); the rest was read from the file it finished.
	FollowFromFile
	// FollowUnfinished: the feed ended early and the proxy stopped
	// without finishing its file (was it killed?); what it committed was
	// read from the file.
	FollowUnfinished
)

func (e FollowEnd) String() string {
	switch e {
	case FollowFinished:
		return "finished"
	case FollowStopped:
		return "stopped"
	case FollowFromFile:
		return "finished from the file"
	case FollowUnfinished:
		return "unfinished"
	}
	return fmt.Sprintf("FollowEnd(%d)", int(e))
}

// Follow hands src's records from opts.From on to opts.Record. With a
// finished capture it stops at the last record. With a live one (a *Live)
// it keeps handing records over as they arrive until the proxy finishes
// or ctx is cancelled; a feed that cuts it off is dialled again from the
// first record not yet handed over, as long as each attempt made
// progress, and records a dying feed never sent are read from the file.
//
// Follow closes a *Live src when it replaces it, and the feeds it dialled
// itself; the caller still closes src (Close is idempotent).
func Follow(ctx context.Context, src Source, opts FollowOptions) (FollowEnd, error) {
	f := &follower{opts: opts, next: max(opts.From, 1)}
	live, isLive := src.(*Live)
	if isLive {
		f.hold(live)
	}
	if err := f.catchUp(ctx, src); err != nil || !isLive {
		return f.end(ctx), err
	}
	defer func() { live.Close() }() // the one in use when Follow ends
	resumedAt := uint64(0)
	for {
		select {
		case <-ctx.Done():
			return FollowStopped, nil
		case _, open := <-live.Updates():
			if err := f.catchUp(ctx, live); err != nil || ctx.Err() != nil {
				return f.end(ctx), err
			}
			if open {
				continue
			}
			// Resume only after progress, so a feed that keeps failing
			// ends the follow instead of looping.
			if live.Err() != nil && f.next > resumedAt {
				resumedAt = f.next
				if again, err := DialLive(live.Path(), f.next); err == nil {
					if f.opts.Resumed != nil {
						f.opts.Resumed(f.next, live.Err())
					}
					live.Close()
					live = again
					f.hold(live)
					continue
				}
			}
			return f.finish(ctx, live)
		}
	}
}

// follower is one Follow's progress: next is the first record not yet
// handed over.
type follower struct {
	opts FollowOptions
	next uint64
}

func (f *follower) hold(live *Live) {
	if f.opts.HoldLimit > 0 {
		live.SetHoldLimit(f.opts.HoldLimit)
	}
}

// end is how a follow that stopped handing records over ended.
func (f *follower) end(ctx context.Context) FollowEnd {
	if ctx.Err() != nil {
		return FollowStopped
	}
	return FollowFinished
}

// catchUp hands over every record src holds from f.next on, stopping
// early when ctx is cancelled; what it handed over is flushed either way.
func (f *follower) catchUp(ctx context.Context, src Source) error {
	for ; f.next <= src.Last() && ctx.Err() == nil; f.next++ {
		rec, err := src.Record(f.next)
		if errors.Is(err, ErrNoRecord) {
			continue // a hole: the proxy could not commit it, and said so
		}
		if err != nil {
			return err
		}
		if rec.Body, err = src.Body(f.next); err != nil {
			return err
		}
		if err := f.opts.Record(&rec); err != nil {
			return err
		}
	}
	if live, ok := src.(*Live); ok {
		live.Discard(f.next) // handed over: a long session must not pile up here
	}
	if f.opts.CaughtUp != nil {
		return f.opts.CaughtUp()
	}
	return nil
}

// finish ends a follow whose feed has ended. A feed cut short (the
// follower fell behind when the proxy exited, or the proxy was killed)
// still leaves the file: what was not handed over is read from there.
func (f *follower) finish(ctx context.Context, live *Live) (FollowEnd, error) {
	err := live.Err()
	if err == nil || errors.Is(err, ErrClosed) {
		return FollowFinished, nil
	}
	rest, openErr := openWhenReleased(ctx, live.Path())
	if openErr != nil && ctx.Err() != nil {
		return FollowStopped, nil
	}
	if openErr != nil {
		return FollowFinished, fmt.Errorf("live feed ended: %w", err)
	}
	defer rest.Close()
	if err := f.catchUp(ctx, rest); err != nil || ctx.Err() != nil {
		return f.end(ctx), err
	}
	if rest.Meta().End.IsZero() {
		return FollowUnfinished, nil
	}
	return FollowFromFile, nil
}

// releaseWait bounds how long openWhenReleased waits for a finishing
// proxy to let go of its file.
const releaseWait = 5 * time.Second

// openWhenReleased opens a capture whose proxy is finishing: its feed is
// gone but the file stays locked until the last commit is written.
func openWhenReleased(ctx context.Context, path string) (*Reader, error) {
	deadline := time.Now().Add(releaseWait)
	for {
		r, err := Open(path)
		if !errors.Is(err, ErrLive) || time.Now().After(deadline) || ctx.Err() != nil {
			return r, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
