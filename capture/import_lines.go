package capture

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// lineReader reads the lines of a file, of any length. A line that fits
// its buffer is returned as a view of the buffer; a longer one is first
// measured, then read from the file into memory of exactly its size, so
// a 200 MB line costs 200 MB and not the doubling copies of a growing
// buffer.
type lineReader struct {
	f   *os.File
	br  *bufio.Reader
	off int64 // the file offset of the next byte br returns
	n   int   // lines read so far
}

// rawLine is one line, without its surrounding white space.
type rawLine struct {
	text  []byte
	n     int  // its line number, from 1
	owned bool // text is memory of its own, not a view of the buffer
}

// lineBuffer is the size of lineReader's buffer: lines up to it are read
// without an allocation of their own.
const lineBuffer = 1 << 20

func newLineReader(f *os.File) *lineReader {
	return &lineReader{f: f, br: bufio.NewReaderSize(f, lineBuffer)}
}

// nonEmpty returns the next line holding more than white space. At the
// end of the file it returns io.EOF, with the last line if that had no
// newline.
func (lr *lineReader) nonEmpty() (rawLine, error) {
	for {
		l, err := lr.next()
		l.text = bytes.TrimSpace(l.text)
		if len(l.text) > 0 || err != nil {
			return l, err
		}
	}
}

// next returns the next line, which is valid until the next call unless
// it is owned.
func (lr *lineReader) next() (rawLine, error) {
	start := lr.off
	lr.n++
	b, err := lr.br.ReadSlice('\n')
	lr.off += int64(len(b))
	if !errors.Is(err, bufio.ErrBufferFull) {
		return rawLine{text: b, n: lr.n}, err
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		b, err = lr.br.ReadSlice('\n')
		lr.off += int64(len(b))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return rawLine{n: lr.n}, err
	}
	text := make([]byte, lr.off-start)
	if _, rerr := lr.f.ReadAt(text, start); rerr != nil {
		return rawLine{n: lr.n}, rerr
	}
	return rawLine{text: text, n: lr.n, owned: true}, err
}
