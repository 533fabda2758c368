package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Writer records one capture. See the package doc for its concurrency.
//
// Two goroutines own the file: the builder frames, classifies and packs
// records into groups, and the committer writes each group in one
// transaction (and fsync). They are joined by a channel where groups wait
// for the committer (see commitsWaiting), so parsing the next group
// overlaps the fsync of the last.
type Writer struct {
	path string
	opts WriterOptions
	db   *bolt.DB
	info os.FileInfo // the file as created, to notice it vanish
	// pages is the file opened by the committer to drop huge bodies'
	// pages from the page cache once written (uncacheBig).
	pages *os.File

	tap     tap
	stop    chan struct{} // closed by Close: drain and finish
	poke    chan struct{} // UpdateMeta: commit soon even without records
	commits chan *group
	// awaiting is the bodies' bytes of the groups waiting in commits.
	awaiting atomic.Int64
	free     chan *group   // committed groups back to the builder for reuse
	lines    lineBuffers   // memory for huge lines, reused
	done     chan struct{} // closed when the committer has finished

	records   atomic.Uint64
	committed atomic.Uint64
	spooled   atomic.Int64 // bytes that went through the spool
	spoolPeak atomic.Int64 // the most the spool held unread
	writeErrs atomic.Int64
	bursts    atomic.Int64

	spoolWarned bool // builder-owned: the spool's failure was told

	metaMu    sync.Mutex
	meta      Meta
	metaDirty bool
	givenEnd  time.Time // Meta.End passed to Create: stored at Close
	lastError string

	// committer-owned
	failed    error // the file is gone: stop writing, count losses
	seenLoss  int64
	inBurst   bool
	failing   bool // the last commit failed: its loss goes on in one burst
	lossSaved Loss

	feed *feedServer

	commitSig   commitSignal // the committer publishes to watchers
	watchMu     sync.Mutex
	watches     []*watch
	watchClosed bool

	closeOnce sync.Once
	closeErr  error
}

// defaults fills in zero options.
func (o *WriterOptions) defaults() {
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.QueueChunks <= 0 {
		o.QueueChunks = 65536
	}
	if o.CommitEvery <= 0 {
		o.CommitEvery = DefaultCommitEvery
	}
	if o.CommitRecords <= 0 {
		o.CommitRecords = 10000
	}
	if o.CommitBytes <= 0 {
		o.CommitBytes = DefaultCommitBytes
	}
	if o.SpoolBytes == 0 {
		o.SpoolBytes = DefaultSpoolBytes
	}
	if o.noWire {
		o.SpoolBytes = -1 // put waits for room: nothing to fall behind
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
}

// Create makes a new capture file at path (0600, its directory 0700) and
// starts the writer goroutine and, unless opts.NoFeed, the live feed.
// It refuses to overwrite an existing file.
func Create(path string, opts WriterOptions) (*Writer, error) {
	opts.defaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating capture directory: %w", err)
	}
	mmapSize := 1 << 30 // readers of the feed then never block a commit's remap
	if opts.maxFileSize > 0 {
		mmapSize = 0
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         time.Second,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: mmapSize,
		NoSync:          opts.NoSync,
		MaxSize:         opts.maxFileSize,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			return os.OpenFile(name, flag|os.O_EXCL, perm)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating capture %q: %w", path, err)
	}
	w := &Writer{
		path:    path,
		opts:    opts,
		db:      db,
		stop:    make(chan struct{}),
		poke:    make(chan struct{}, 1),
		commits: make(chan *group, commitsWaiting),
		free:    make(chan *group, 2),
		lines:   newLineBuffers(),
		done:    make(chan struct{}),
		meta:    opts.Meta,
	}
	w.tap.queue = make(chan item, opts.QueueChunks)
	w.tap.limit = opts.QueueBytes
	w.fillMeta()
	if err := w.initFile(); err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("creating capture %q: %w", path, err)
	}
	w.info, _ = os.Stat(path)
	if !opts.NoFeed {
		// Recording never depends on the feed: without one, readers wait
		// for the proxy to exit.
		if w.feed, err = startFeed(w); err != nil {
			opts.Warn(fmt.Sprintf("capture %s has no live feed (tail and inspect can read it once the proxy exits): %v", path, err))
		}
	}
	go w.build()
	go w.commitLoop()
	return w, nil
}

func (w *Writer) fillMeta() {
	m := &w.meta
	m.FormatVersion = FormatVersion
	m.CommitEvery = w.opts.CommitEvery
	if m.Start.IsZero() {
		m.Start = time.Now().UTC()
	}
	if m.Pid == 0 {
		m.Pid = os.Getpid()
	}
	// A capture reads as unfinished until Close; an end time given by an
	// import or export is the original session's and is stored then.
	w.givenEnd, m.End = m.End, time.Time{}
}

// initFile creates the buckets and stores the metadata, so the file is a
// valid capture from its first moment.
func (w *Writer) initFile() error {
	return w.db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		mb := tx.Bucket(bucketMeta)
		if err := mb.Put(keyVersion, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
		if err := mb.Put(keyLast, seqKey(0)); err != nil {
			return err
		}
		return putMeta(mb, &w.meta)
	})
}

func putMeta(mb *bolt.Bucket, m *Meta) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return mb.Put(keyMeta, v)
}

// Path returns the capture file's path.
func (w *Writer) Path() string { return w.path }

// UpdateMeta changes the capture's metadata; it is stored with the next
// commit, which comes within CommitEvery.
func (w *Writer) UpdateMeta(fn func(*Meta)) {
	w.metaMu.Lock()
	fn(&w.meta)
	w.metaDirty = true
	w.metaMu.Unlock()
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// setEnd sets the end time Close stores, for an import that learns the
// session's end only from its last message.
func (w *Writer) setEnd(t time.Time) {
	w.metaMu.Lock()
	w.givenEnd = t
	w.metaMu.Unlock()
}

// Meta returns a copy of the current metadata.
func (w *Writer) Meta() Meta {
	w.metaMu.Lock()
	defer w.metaMu.Unlock()
	m := w.meta
	m.Loss = w.loss()
	w.noteBacklog(&m)
	return m
}

// backlog reads the spool's counters, which the builder publishes.
func (w *Writer) backlog() Backlog {
	return Backlog{Bytes: w.spooled.Load(), Peak: w.spoolPeak.Load()}
}

// noteBacklog puts the spool's counters in m once anything was spooled.
// Until then m keeps what it was given: an export copies a recording's
// metadata, and its own writer never spools.
func (w *Writer) noteBacklog(m *Meta) {
	if b := w.backlog(); b.Bytes > 0 {
		m.Backlog = b
	}
}

// Stats returns the running counters.
func (w *Writer) Stats() Stats {
	return Stats{
		Records:   w.records.Load(),
		Committed: w.committed.Load(),
		Loss:      w.Meta().Loss,
		Queued:    w.tap.queued.Load(),
		Backlog:   w.backlog(),
	}
}

// loss returns the loss counters; metaMu must be held.
func (w *Writer) loss() Loss {
	return Loss{
		Messages:    w.tap.lostMsgs.Load(),
		Bytes:       w.tap.lostBytes.Load(),
		Bursts:      w.bursts.Load(),
		WriteErrors: w.writeErrs.Load(),
		LastError:   w.lastError,
	}
}

// Close drains the queue, commits, stores the end time and closes the
// file and the live feed. It is idempotent.
func (w *Writer) Close() error {
	w.closeOnce.Do(func() {
		w.tap.shut()
		close(w.stop)
		<-w.done
		w.closeWatches()
		if w.feed != nil {
			w.feed.close()
		}
		var used int64
		w.db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
		if err := w.db.Close(); err != nil && w.closeErr == nil {
			w.closeErr = fmt.Errorf("closing capture %q: %w", w.path, err)
		}
		w.trim(used)
		if l := w.Meta().Loss; l.Messages > 0 || l.WriteErrors > 0 {
			w.opts.Warn(lossSummary(w.path, l))
		}
	})
	return w.closeErr
}

// lossSummary is the line Close says when anything was lost.
func lossSummary(path string, l Loss) string {
	s := fmt.Sprintf("capture %s lost %d messages (%d bytes) in %s", path, l.Messages, l.Bytes, plural(l.Bursts, "burst"))
	if l.WriteErrors > 0 {
		s += fmt.Sprintf(", %s (the last: %s)", plural(l.WriteErrors, "failed write"), l.LastError)
	}
	return s + "; everything was forwarded"
}

func plural(n int64, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// trim cuts the finished file to the pages bbolt uses: it grows files in
// 16 MiB steps, and a short capture should not look (or copy) like 16 MiB.
func (w *Writer) trim(used int64) {
	if used <= 0 || w.failed != nil {
		return
	}
	fi, err := os.Stat(w.path)
	if err != nil || !os.SameFile(fi, w.info) || fi.Size() <= used {
		return
	}
	os.Truncate(w.path, used)
}

var errFileGone = errors.New("capture file was removed or replaced")
