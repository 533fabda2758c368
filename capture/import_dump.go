package capture

import "github.com/acpscope/acpscope/wire"

// parseDumpLine reads one line of our own JSONL (acpscope dump, export
// --format jsonl: AppendJSONL lines), recognised by their "kind" member.
// skip is set for batch members, whose bytes the batch line carries. The
// body may be a slice of raw.
func parseDumpLine(raw []byte) (l line, skip, ok bool) {
	if raw[0] != '{' {
		return line{}, false, false
	}
	r, err := parseJSONL(raw, true)
	if err != nil || r.Body == nil {
		return line{}, false, false
	}
	if r.Flags&wire.FlagBatchMember != 0 {
		return line{}, true, true
	}
	l = line{t: r.Time, body: r.Body, dir: r.Dir, flags: r.Flags &^ wire.FlagBatchMember, env: r.HTTP, conn: r.Conn}
	switch {
	case r.Kind == wire.KindStderr:
		l.stream = StreamStderr
	case r.Dir == wire.DirClient:
		l.stream = StreamClient
	default:
		l.stream = StreamAgent
	}
	return l, false, true
}
