package inspector

import (
	"sort"

	"github.com/acpscope/acpscope/capture"
	"github.com/rivo/tview"
)

// Rows are read from the store in blocks and a bounded number of blocks is
// kept decoded, so a table over a million records holds a few thousand.
const (
	blockRows = 256
	maxBlocks = 48
	// previewBytes bounds a row's preview text (stderr, non-protocol
	// lines).
	previewBytes = 160
	// decorateMax is the largest body read to decorate a row.
	decorateMax = 1 << 20
)

// rowInfo is one decoded table row.
type rowInfo struct {
	rec capture.Record
	// update is a session/update's sessionUpdate variant.
	update string
	// preview is the start of a line that is not JSON-RPC (stderr, a log
	// line on stdout, invalid JSON), shown in the method column.
	preview string
}

type rowBlock struct {
	rows []rowInfo
	used uint64
}

// rowModel is the message table's content: the rows of one view (every
// record, a filter's matches, or the marked records) read on demand. It
// belongs to the UI goroutine.
type rowModel struct {
	tview.TableContentReadOnly
	src capture.Source
	// total is the number of rows in the view. When seqs is nil the view
	// holds every record and row i shows sequence i+1 (sequences are
	// dense), so no per-row memory is needed.
	total int
	seqs  []uint64
	gen   int // counts changes of the view, for what is derived from it

	blocks map[int]*rowBlock
	tick   uint64
	err    error // the last read error, shown in the status line

	// deco caches the decorations read off the UI goroutine, by
	// sequence; askDeco hands the decorator the rows still to read (nil
	// when there is none: rows show their metadata only).
	deco    map[uint64]decoration
	askDeco func([]decoWant)

	findings map[uint64]string // worst finding severity per sequence
	marks    map[uint64]bool
	delta    bool // time column shows the gap to the previous row
	cols     []column

	held []heldRow // messages the proxy holds for us, after the records
}

func newRowModel(src capture.Source) *rowModel {
	return &rowModel{
		src:      src,
		total:    int(src.Last()),
		blocks:   map[int]*rowBlock{},
		deco:     map[uint64]decoration{},
		findings: map[uint64]string{},
		marks:    map[uint64]bool{},
		cols:     append([]column(nil), columns...),
	}
}

// setView replaces the rows: seqs nil shows every record up to last.
func (m *rowModel) setView(seqs []uint64, all bool) {
	if all {
		m.seqs, m.total = nil, int(m.src.Last())
	} else {
		m.seqs, m.total = seqs, len(seqs)
	}
	m.blocks = map[int]*rowBlock{}
	m.gen++
}

// grow extends the view to newTotal rows after records arrived, dropping
// the last blocks: they may be partial, and requests there may have been
// paired since.
func (m *rowModel) grow(newTotal int) {
	if newTotal <= m.total && m.seqs == nil {
		return
	}
	last := (m.total - 1) / blockRows
	for b := last - 1; b <= last+1; b++ {
		delete(m.blocks, b)
	}
	m.total = newTotal
	m.gen++
}

// appendSeqs adds a live filter's new matches.
func (m *rowModel) appendSeqs(seqs []uint64) {
	m.seqs = append(m.seqs, seqs...)
	m.grow(len(m.seqs))
}

// seqAt returns the sequence number shown on row i (0-based, no header).
func (m *rowModel) seqAt(i int) uint64 {
	if i < 0 || i >= m.total {
		return 0
	}
	if m.seqs == nil {
		return uint64(i + 1)
	}
	return m.seqs[i]
}

// indexOf returns the row showing seq, or the row of the nearest later
// sequence and false when the view does not hold it.
func (m *rowModel) indexOf(seq uint64) (int, bool) {
	if m.seqs == nil {
		i := int(seq) - 1
		if i < 0 {
			return 0, false
		}
		if i >= m.total {
			return m.total - 1, false
		}
		return i, true
	}
	i := sort.Search(len(m.seqs), func(i int) bool { return m.seqs[i] >= seq })
	if i < len(m.seqs) && m.seqs[i] == seq {
		return i, true
	}
	if i >= len(m.seqs) {
		i = len(m.seqs) - 1
	}
	return i, false
}

// row returns row i decoded, reading its block when needed; nil when the
// store could not be read.
func (m *rowModel) row(i int) *rowInfo {
	if i < 0 || i >= m.total {
		return nil
	}
	b := i / blockRows
	blk := m.blocks[b]
	if blk == nil || i-b*blockRows >= len(blk.rows) {
		blk = m.load(b)
		if blk == nil {
			return nil
		}
	}
	m.tick++
	blk.used = m.tick
	if off := i - b*blockRows; off < len(blk.rows) {
		return &blk.rows[off]
	}
	return nil
}

func (m *rowModel) load(b int) *rowBlock {
	start := b * blockRows
	end := min(start+blockRows, m.total)
	blk := &rowBlock{rows: make([]rowInfo, 0, end-start)}
	if m.seqs == nil {
		err := m.src.Scan(uint64(start+1), func(r *capture.Record) bool {
			blk.rows = append(blk.rows, rowInfo{rec: *r})
			return len(blk.rows) < end-start
		})
		if err != nil {
			m.err = err
		}
	} else {
		for _, seq := range m.seqs[start:end] {
			r, err := m.src.Record(seq)
			if err != nil {
				m.err = err
				break
			}
			blk.rows = append(blk.rows, rowInfo{rec: r})
		}
	}
	if len(blk.rows) == 0 {
		return nil
	}
	m.decorateBlock(blk)
	m.evict()
	m.blocks[b] = blk
	return blk
}

func (m *rowModel) evict() {
	for len(m.blocks) >= maxBlocks {
		oldest, oldestUse := -1, ^uint64(0)
		for b, blk := range m.blocks {
			if blk.used < oldestUse {
				oldest, oldestUse = b, blk.used
			}
		}
		delete(m.blocks, oldest)
	}
}

// GetRowCount counts the header row and the held rows too.
func (m *rowModel) GetRowCount() int    { return m.total + len(m.held) + 1 }
func (m *rowModel) GetColumnCount() int { return len(m.cols) }

func (m *rowModel) GetCell(row, col int) *tview.TableCell {
	if col < 0 || col >= len(m.cols) {
		return nil
	}
	c := m.cols[col]
	if row == 0 {
		return headerCell(c)
	}
	if k := row - 1 - m.total; k >= 0 && k < len(m.held) {
		return m.heldCell(c, &m.held[k])
	}
	ri := m.row(row - 1)
	if ri == nil {
		return tview.NewTableCell("?")
	}
	var prev *rowInfo
	if m.delta && c.name == "time" {
		prev = m.row(row - 2)
	}
	return m.cell(c, ri, prev)
}

// fitMethod gives the method column what the other columns leave of the
// table's width, so every column stays on screen at 80 columns.
func (m *rowModel) fitMethod(width int) {
	others := 0
	for _, c := range m.cols {
		if c.name != "method" {
			others += c.max + 1
		}
	}
	for i := range m.cols {
		if m.cols[i].name == "method" {
			m.cols[i].max = max(12, width-others-1)
		}
	}
}
