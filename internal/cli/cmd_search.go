package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/inspector"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/replay"
	"github.com/acpscope/acpscope/wire"
	flag "github.com/spf13/pflag"
	"golang.org/x/term"
)

// searchHelp is `acpscope search`'s synopsis, examples and flags.
func searchHelp() help {
	return help{
		usage: "PATTERN… [--dir DIR] [--open]",
		example: `  acpscope search timeout                           # the word, any case, in every capture
  acpscope search '"Resource not found"'            # exact text
  acpscope search 'method:session/prompt refactor'  # the filter language, as dump --filter takes it
  acpscope search --open 'kind:error'               # open the inspector at the newest hit
  acpscope show 20261121T120405Z-claude-code-acp-4242 57   # a hit, whole`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.Bool("open", false, "open the inspector at the first hit instead of listing them all")
			fs.Bool("help-filter", false, "print the filter language and exit")
		},
	}
}

// runSearch prints CAPTURE:SEQ and a line of context for every record of
// every capture that PATTERN matches, newest capture first. It exits 0
// with hits and 1 without, as grep does.
func runSearch(fs *flag.FlagSet, args []string) (int, error) {
	if help, _ := fs.GetBool("help-filter"); help {
		fmt.Print(capture.FilterGrammar)
		return 0, nil
	}
	pattern := strings.Join(args, " ")
	filter, err := capture.ParseFilter(pattern)
	var fe *capture.FilterError
	switch {
	case errors.As(err, &fe):
		return 2, usageErrorf("bad PATTERN at byte %d: %s ('acpscope search --help-filter' shows the language)", fe.Pos, fe.Msg)
	case err != nil:
		return 2, usageErrorf("bad PATTERN: %v", err)
	case filter.Empty():
		return 2, usageErrorf("give a PATTERN: words to find, or a filter such as 'method:session/prompt error'")
	}
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return 1, err
	}
	open, _ := fs.GetBool("open")
	out := bufio.NewWriter(os.Stdout)
	s := &searcher{filter: filter, terms: filter.TextTerms(), out: out, first: open,
		progress: newProgress(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())), len(infos), func() { out.Flush() })}
	err = s.all(infos)
	s.progress.clear()
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return 1, err
	}
	if s.hits == 0 {
		fmt.Fprintf(os.Stderr, "acpscope search: no match in %s in %s\n", replay.Count(len(infos), "capture", "captures"), dir)
		return 1, nil
	}
	if open {
		return openAt(dir, s.hitPath, s.hitSeq)
	}
	return 0, nil
}

// searcher goes through the captures and prints the hits.
type searcher struct {
	filter   *capture.Filter
	terms    []capture.TextTerm
	out      io.Writer
	progress *progress
	first    bool // stop at the first hit (--open)

	hits    int
	hitPath string
	hitSeq  uint64
}

func (s *searcher) all(infos []capture.Info) error {
	for i, in := range infos {
		name := strings.TrimSuffix(filepath.Base(in.Path), capture.Ext)
		s.progress.report(i, s.hits, name)
		if in.Err != nil {
			s.progress.clear()
			fmt.Fprintf(os.Stderr, "acpscope search: skipping %s: %v\n", name, in.Err)
			continue
		}
		if err := s.one(in.Path, name, i); err != nil {
			s.progress.clear()
			fmt.Fprintf(os.Stderr, "acpscope search: skipping %s: %v\n", name, err)
		}
		if s.first && s.hits > 0 {
			return nil
		}
	}
	return nil
}

// one searches one capture; a live one holds at least what it held when
// the search reached it.
func (s *searcher) one(path, name string, index int) error {
	src, err := capture.OpenComplete(path)
	if err != nil {
		return err
	}
	defer src.Close()
	var werr error
	n := 0
	err = capture.ScanMatches(src, s.filter, 1, 0, func(r *capture.Record, matched bool) bool {
		if n++; n%4096 == 0 {
			s.progress.report(index, s.hits, name)
		}
		if !matched {
			return true
		}
		body, err := src.Body(r.Seq)
		if err != nil {
			werr = err
			return false
		}
		s.hits++
		s.hitPath, s.hitSeq = path, r.Seq
		s.progress.clear()
		_, werr = fmt.Fprintf(s.out, "%s:%d  %s  %s  %s\n", name, r.Seq, r.When().Local().Format("2006-01-02 15:04:05"),
			hitWhat(r, body), hitContext(body, s.terms))
		return werr == nil && !s.first
	})
	if err == nil {
		err = werr
	}
	return err
}

// hitWhat says what the record is: direction, kind, method.
func hitWhat(r *capture.Record, body []byte) string {
	what := arrow(r) + " " + r.Kind.String()
	if r.Method != "" {
		what += " " + r.Method
	}
	if r.Method == "session/update" && r.Kind == wire.KindNotification {
		if u := protocol.UpdateKind(body); u != "" {
			what += " " + u
		}
	}
	return what
}

// Context around a hit: this many bytes before the matched text and after.
const (
	contextBefore = 30
	contextAfter  = 60
)

// hitContext is one line around the first text term found in body, or
// the start of body when the pattern has no text, escapes visible.
func hitContext(body []byte, terms []capture.TextTerm) string {
	for _, t := range terms {
		if i := locate(body, t); i >= 0 {
			return excerpt(body, max(i-contextBefore, 0), min(i+len(t.Text)+contextAfter, len(body)))
		}
	}
	return excerpt(body, 0, min(len(body), contextBefore+contextAfter))
}

// excerpt quotes body[from:to], widened to whole UTF-8 characters, with
// an ellipsis on each side that was cut.
func excerpt(body []byte, from, to int) string {
	for from > 0 && !utf8.RuneStart(body[from]) {
		from--
	}
	for to < len(body) && !utf8.RuneStart(body[to]) {
		to++
	}
	s := oneLine(body[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(body) {
		s += "…"
	}
	return s
}

// oneLine keeps text on one line: control characters and bytes that
// are not UTF-8 are escaped as Go would (\n, \x00), the rest (quotes
// included, which JSON is full of) left as they are.
func oneLine(b []byte) string {
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&out, `\x%02x`, b[0])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			out.WriteString(q[1 : len(q)-1])
		default:
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.String()
}

// locateWindow bounds how much of a body a non-ASCII word is looked for
// in (it is lower-cased for the search); ASCII words and exact text are
// found anywhere.
const locateWindow = 4 << 20

// locate returns where term first occurs in body, -1 if not found: a
// bare word ignoring case, as the filter matches it, quoted text exactly.
func locate(body []byte, t capture.TextTerm) int {
	word := []byte(t.Text)
	switch {
	case t.Exact:
		return bytes.Index(body, word)
	case isASCIIWord(word):
		lo, up := bytes.ToLower(word[:1])[0], bytes.ToUpper(word[:1])[0]
		for i := 0; i+len(word) <= len(body); i++ {
			if (body[i] == lo || body[i] == up) && bytes.EqualFold(body[i:i+len(word)], word) {
				return i
			}
		}
		return -1
	}
	window := body[:min(len(body), locateWindow)]
	return bytes.Index(bytes.ToLower(window), bytes.ToLower(word))
}

func isASCIIWord(w []byte) bool {
	for _, c := range w {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return len(w) > 0
}

// openAt starts the inspector at one message of a capture.
func openAt(dir, path string, seq uint64) (int, error) {
	err := inspector.Run(inspector.Options{Dir: dir, Path: path, Seq: seq})
	if errors.Is(err, inspector.ErrNoTerminal) {
		return 1, fmt.Errorf("--open needs a terminal on stdin and stdout; the hit is %s:%d (acpscope show prints it)",
			strings.TrimSuffix(filepath.Base(path), capture.Ext), seq)
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
