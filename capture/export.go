package capture

// Export writes one session of a capture to a new capture file, the bug
// report a user attaches to an issue, redacted unless told otherwise.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// ErrManySessions: the capture holds several sessions and none was chosen.
var ErrManySessions = errors.New("the capture holds several sessions; choose one with --session")

// ExportOptions tune Export and the other exporters.
type ExportOptions struct {
	// Session picks the session to export; "" exports the only one (or
	// everything when the capture has no session at all).
	Session string
	// NoRedact writes secrets as they were.
	NoRedact bool
	// Redact adds rules to the default ones.
	Redact RedactOptions
	// SourceName is recorded in the export's metadata (a file name).
	SourceName string
	// Progress, when set, is called every few thousand records.
	Progress func(done, total uint64)
}

// ExportResult says what an export wrote.
type ExportResult struct {
	Session    string
	Records    int
	Redactions []Redaction // seqs are the source capture's
}

// Selection is the set of records one export covers.
type Selection struct {
	Session string
	Seqs    []uint64
	// Sessions lists every session of the source, in order.
	Sessions []string
}

// SelectSession picks the records of one session from src: those that
// carry its id, and the connection-level records (initialize, stderr, …)
// of the connections it used, but not the session/new of other sessions.
func SelectSession(src Source, session string) (Selection, error) {
	sessionOf := map[uint64]string{}
	connsOf := map[string]map[uint32]bool{}
	var sel Selection
	err := src.Scan(1, func(r *Record) bool {
		if r.Session != "" {
			if connsOf[r.Session] == nil {
				connsOf[r.Session] = map[uint32]bool{}
				sel.Sessions = append(sel.Sessions, r.Session)
			}
			connsOf[r.Session][r.Conn] = true
			sessionOf[r.Seq] = r.Session
		}
		return true
	})
	if err != nil {
		return sel, fmt.Errorf("listing sessions: %w", err)
	}
	switch {
	case session == "" && len(sel.Sessions) > 1:
		return sel, fmt.Errorf("%w (sessions: %s)", ErrManySessions, strings.Join(sel.Sessions, ", "))
	case session == "" && len(sel.Sessions) == 1:
		session = sel.Sessions[0]
	case session != "" && connsOf[session] == nil:
		return sel, badOption(fmt.Errorf("no session %q in the capture (sessions: %s)", session, strings.Join(sel.Sessions, ", ")))
	}
	sel.Session = session
	err = src.Scan(1, func(r *Record) bool {
		if session != "" && !connsOf[session][r.Conn] {
			return true
		}
		s := r.Session
		if s == "" && r.Peer != 0 {
			s = sessionOf[r.Peer] // session/new: known from its answer
		}
		if s == "" || s == session || session == "" {
			sel.Seqs = append(sel.Seqs, r.Seq)
		}
		return true
	})
	return sel, err
}

// startExport selects the session to export and builds its redactor.
func startExport(src Source, opts ExportOptions) (Selection, *Redactor, ExportResult, error) {
	var res ExportResult
	sel, err := SelectSession(src, opts.Session)
	if err != nil {
		return sel, nil, res, err
	}
	res.Session = sel.Session
	red, err := NewRedactor(opts.Redact)
	return sel, red, res, err
}

// Export writes the selected session of src to a new capture at dst,
// redacted unless opts.NoRedact. dst must not exist.
func Export(src Source, dst string, opts ExportOptions) (ExportResult, error) {
	sel, red, res, err := startExport(src, opts)
	if err != nil {
		return res, err
	}
	meta, metaFound := exportMeta(src.Meta(), red, opts)
	res.Redactions = append(res.Redactions, metaFound...)
	w, err := Create(dst, WriterOptions{Meta: meta, NoFeed: true, QueueBytes: 256 << 20})
	if err != nil {
		return res, fmt.Errorf("creating the export: %w", err)
	}
	cp := newCopier(w)
	for i, seq := range sel.Seqs {
		rec, err := src.Record(seq)
		if err == nil {
			rec.Body, err = src.Body(seq)
		}
		if err != nil {
			w.Close()
			os.Remove(dst)
			return res, fmt.Errorf("reading record %d: %w", seq, err)
		}
		if rec.Flags&wire.FlagBatchMember != 0 {
			continue // the batch line itself carries the member's bytes
		}
		res.Redactions = append(res.Redactions, redactRecord(red, &rec, opts)...)
		cp.put(&rec)
		res.Records++
		if opts.Progress != nil && i%5000 == 4999 {
			opts.Progress(uint64(i+1), uint64(len(sel.Seqs)))
		}
	}
	list, _ := json.Marshal(res.Redactions)
	w.UpdateMeta(func(m *Meta) {
		m.Notes["redactions"] = string(list)
		m.Notes["session"] = sel.Session
	})
	if err := cp.finish(); err != nil {
		os.Remove(dst)
		return res, err
	}
	return res, nil
}

// redactRecord redacts rec for an export; with --no-redact it only
// relabels credential fingerprints, which no export carries.
func redactRecord(red *Redactor, rec *Record, opts ExportOptions) []Redaction {
	if opts.NoRedact {
		red.Relabel(rec)
		return nil
	}
	return red.Record(rec)
}

// exportMeta is the source's metadata, redacted, with notes on where the
// export came from and whether it is redacted. A command line carries
// secrets as often as a message does (--auth-token, an upstream URL with
// a password).
func exportMeta(src Meta, red *Redactor, opts ExportOptions) (Meta, []Redaction) {
	m := src
	m.Notes = map[string]string{}
	for k, v := range src.Notes {
		m.Notes[k] = v
	}
	m.Notes["exportedFrom"] = opts.SourceName
	m.Notes["exportedAt"] = time.Now().UTC().Format(time.RFC3339)
	if opts.NoRedact {
		m.Notes["redacted"] = "no (--no-redact)"
		return m, nil
	}
	m.Notes["redacted"] = "yes"
	var found []Redaction
	m.Argv, found = red.Argv(src.Argv)
	for i := range found {
		found[i].Path = "meta." + found[i].Path
	}
	text := func(where string, s *string) {
		if rule := red.textField(s); rule != "" {
			found = append(found, Redaction{Path: where, Rule: rule})
		}
	}
	text("meta.upstream", &m.Upstream)
	text("meta.listen", &m.Listen)
	text("meta.cwd", &m.Cwd)
	if src.Exit != nil {
		exit := *src.Exit
		text("meta.exit.error", &exit.Error)
		m.Exit = &exit
	}
	for _, k := range sortedKeys(m.Notes) {
		v := m.Notes[k]
		text("meta.notes."+k, &v)
		m.Notes[k] = v
	}
	return m, found
}

// copier writes records into a Writer the way they first arrived: stdio
// lines as stream chunks (so framing, CRLF and partial lines come out the
// same), HTTP and WebSocket messages as frames with their envelopes.
type copier struct {
	w     *Writer
	ended map[copyStream]bool
	last  int64
}

// copyStream names one stream of one connection.
type copyStream struct {
	conn   uint32
	stream Stream
}

// recordStream is the stdio stream a record came on.
func recordStream(r *Record) Stream {
	switch {
	case r.Kind == wire.KindStderr:
		return StreamStderr
	case r.Dir == wire.DirClient:
		return StreamClient
	}
	return StreamAgent
}

func newCopier(w *Writer) *copier { return &copier{w: w, ended: map[copyStream]bool{}} }

func (c *copier) put(r *Record) {
	c.last = max(c.last, r.Time)
	stream := recordStream(r)
	if r.HTTP != nil && r.Kind != wire.KindStderr {
		c.w.Frame(r.Conn, r.Dir, r.Time, r.Body, r.Flags&^wire.FlagBatchMember, r.HTTP)
	} else {
		line := r.Body
		if r.Flags&wire.FlagPartial == 0 {
			line = append(line[:len(line):len(line)], '\n')
		} else {
			c.ended[copyStream{r.Conn, stream}] = true
		}
		c.w.Chunk(r.Conn, stream, r.Time, line)
	}
	c.throttle()
}

// throttle keeps the hand-off queue from overflowing: an export has no
// live peer to keep up with, so it waits instead of losing records.
func (c *copier) throttle() {
	for c.w.Stats().Queued > 64<<20 {
		time.Sleep(time.Millisecond)
	}
}

// finish ends partial streams, closes the writer and checks nothing was
// lost on the way.
func (c *copier) finish() error {
	for k := range c.ended {
		c.w.EndStream(k.conn, k.stream, c.last)
	}
	if err := c.w.Close(); err != nil {
		return err
	}
	if l := c.w.Stats().Loss; l.Messages > 0 || l.Bytes > 0 {
		return fmt.Errorf("writing %s: %d records (%d bytes) could not be written; try again", filepath.Base(c.w.Path()), l.Messages, l.Bytes)
	}
	return nil
}
