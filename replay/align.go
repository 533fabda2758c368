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

// maxEdits bounds the alignment: Myers' algorithm costs O((N+M)·D) time
// and O(D²) memory for D insertions and deletions. Beyond it, the middle
// part is matched position by position.
const maxEdits = 2000

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
	pairs, ok := myers(keys(a), keys(b), maxEdits)
	if !ok {
		return alignByPosition(a, b, off)
	}
	for i := range pairs {
		for s := 0; s < 2; s++ {
			if pairs[i][s] >= 0 {
				pairs[i][s] += off
			}
		}
	}
	return pairs
}

// myers finds a shortest edit script between ka and kb (Myers 1986, the
// greedy forward algorithm) and returns it as index pairs, -1 marking a
// gap. It gives up (false) beyond maxD edits.
func myers(ka, kb []string, maxD int) ([][2]int, bool) {
	n, m := len(ka), len(kb)
	off := n + m + 1
	v := make([]int32, 2*off+1)
	var trace [][]int32 // trace[d][k+d]: furthest x on diagonal k after step d
	for d := 0; d <= n+m; d++ {
		if d > maxD {
			return nil, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: an insertion
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && ka[x] == kb[y] {
				x, y = x+1, y+1
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	return backtrack(trace, n, m), true
}

// backtrack walks the trace from (n, m) back to (0, 0).
func backtrack(trace [][]int32, n, m int) [][2]int {
	var rev [][2]int
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, [2]int{x, y})
		}
		if x == prevX {
			rev = append(rev, [2]int{-1, prevY})
		} else {
			rev = append(rev, [2]int{prevX, -1})
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, [2]int{x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
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
		if a.First().Kind.IsResponse() {
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
