package replay

// Op says how an entry of a comparison relates the two sides.
type Op string

// The entry operations. "removed" is in the old side (the recording) only:
// missing from the new run; "added" is extra in the new run.
const (
	OpSame    Op = "same"
	OpChanged Op = "changed"
	OpRemoved Op = "removed"
	OpAdded   Op = "added"
)

// Entry is one row of a comparison.
type Entry struct {
	Op      Op
	A, B    *Item // A from the old side, B from the new; nil on a gap
	Changes []Change
}

// CompareOptions tune Compare.
type CompareOptions struct {
	// Ignore lists path globs to skip (DefaultIgnore plus --ignore).
	Ignore Ignore
	// Binder, when set, maps old-side identifiers to new-side ones; with
	// Learn it also learns them from each aligned pair as it goes.
	Binder *Binder
	Learn  bool
}

// alignLimit bounds the alignment table (cells); beyond it, the middle
// part is matched position by position.
const alignLimit = 16 << 20

// Align pairs the items of a and b by a longest common subsequence of
// their keys. It returns index pairs in order; -1 marks a gap.
func Align(a, b []Item) [][2]int {
	var out [][2]int
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre].Key() == b[pre].Key() {
		out = append(out, [2]int{pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf].Key() == b[len(b)-1-suf].Key() {
		suf++
	}
	out = append(out, alignMiddle(a[pre:len(a)-suf], b[pre:len(b)-suf], pre)...)
	for k := suf; k > 0; k-- {
		out = append(out, [2]int{len(a) - k, len(b) - k})
	}
	return out
}

func alignMiddle(a, b []Item, off int) [][2]int {
	n, m := len(a), len(b)
	if n*m > alignLimit {
		return alignByPosition(a, b, off)
	}
	ka, kb := keys(a), keys(b)
	// lcs[i][j] = LCS length of a[i:], b[j:]
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ka[i] == kb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out [][2]int
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case ka[i] == kb[j]:
			out = append(out, [2]int{off + i, off + j})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, [2]int{off + i, -1})
			i++
		default:
			out = append(out, [2]int{-1, off + j})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, [2]int{off + i, -1})
	}
	for ; j < m; j++ {
		out = append(out, [2]int{-1, off + j})
	}
	return out
}

func alignByPosition(a, b []Item, off int) [][2]int {
	var out [][2]int
	for i := 0; i < max(len(a), len(b)); i++ {
		switch {
		case i < len(a) && i < len(b) && a[i].Key() == b[i].Key():
			out = append(out, [2]int{off + i, off + i})
		default:
			if i < len(a) {
				out = append(out, [2]int{off + i, -1})
			}
			if i < len(b) {
				out = append(out, [2]int{-1, off + i})
			}
		}
	}
	return out
}

func keys(items []Item) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = items[i].Key()
	}
	return out
}

// Compare aligns two item sequences and diffs each aligned pair.
func Compare(a, b []Item, opts CompareOptions) []Entry {
	var out []Entry
	for _, p := range Align(a, b) {
		switch {
		case p[1] < 0:
			out = append(out, Entry{Op: OpRemoved, A: &a[p[0]]})
		case p[0] < 0:
			out = append(out, Entry{Op: OpAdded, B: &b[p[1]]})
		default:
			e := Entry{A: &a[p[0]], B: &b[p[1]]}
			e.Changes = compareItem(e.A, e.B, opts)
			e.Op = OpSame
			if len(e.Changes) > 0 {
				e.Op = OpChanged
			}
			out = append(out, e)
		}
	}
	return out
}

// compareItem diffs two aligned items: chunk runs by their joined text
// (and nothing else: the chunking is incidental), others field by field.
func compareItem(a, b *Item, opts CompareOptions) []Change {
	if opts.Learn && opts.Binder != nil {
		keep := notSessionID // session ids are learned from responses only
		if a.First().IsResponse() {
			keep = nil
		}
		opts.Binder.LearnIf(a.First().Body, b.First().Body, keep)
	}
	var mapOld func(string) string
	if opts.Binder != nil {
		mapOld = opts.Binder.Map
	}
	if a.Folded() && (len(a.Msgs) > 1 || len(b.Msgs) > 1) {
		if a.Text == b.Text {
			return nil
		}
		return []Change{{Path: "params.update.content.text (joined)", Op: "changed", Old: short(quote(a.Text)), New: short(quote(b.Text))}}
	}
	return DiffJSON(a.First().Body, b.First().Body, opts.Ignore, mapOld)
}

// Mismatches counts the entries that are not the same.
func Mismatches(entries []Entry) int {
	n := 0
	for _, e := range entries {
		if e.Op != OpSame {
			n++
		}
	}
	return n
}
