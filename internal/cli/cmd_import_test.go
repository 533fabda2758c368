package cli

// Export and import of large captures, measured on real processes: the
// acpscope binary (built without the race detector, so that its memory
// is its own) run on a million records and on a 200 MB message, timed
// and its peak RSS read from the kernel (ru_maxrss, the VmHWM of the
// process), against `acpscope dump --format jsonl` of the same capture.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// plainAcpscope is acpscope built without -race: a race-instrumented
// process uses several times the memory, and these tests judge memory.
var plainAcpscope = netkit.Binary{Package: "github.com/acpscope/acpscope", Name: "acpscope"}

// rssSpawner starts the commands whose memory is judged, so that their
// peak RSS is theirs alone (see internal/testkit/rssspawn).
var rssSpawner = netkit.Binary{Package: "github.com/acpscope/acpscope/internal/testkit/rssspawn", Name: "rssspawn"}

// plainBinary builds plainAcpscope once per test binary.
func plainBinary(t testing.TB) string { return plainAcpscope.Path(t) }

// sizes are the two shapes of a large capture: many small messages, and
// one large message among a few.
type sizes struct {
	name    string
	records int // messages besides the large one
	big     int // bytes of the large message's text (0: none)
}

var (
	light = []sizes{{"100k records", 100_000, 0}, {"20 MB message", 100, 20_000_000}}
	heavy = []sizes{{"1M records", 1_000_000, 0}, {"200 MB message", 100, 200_000_000}}
)

// genJSONL writes a session of s.records messages (prompts, each answered
// by 98 message chunks and a stop) in the simplest JSONL import form, and
// the large message after the first prompt. It returns the size of the
// largest message and how many messages it wrote.
func genJSONL(t testing.TB, path string, s sizes) (largest, count int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	ms := int64(1_780_000_000_000)
	line := func(dir, msg string) {
		ms++
		count++
		largest = max(largest, len(msg))
		fmt.Fprintf(w, `{"dir":%q,"time":%d,"msg":%s}`+"\n", dir, ms, msg)
	}
	line("client", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"bench","version":"1"}}}`)
	line("agent", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"bench-agent","version":"1"}}}`)
	line("client", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	line("agent", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}`)
	n := 4
	for id := 2; n < s.records; id++ {
		line("client", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"question %d"}]}}`, id, id))
		n++
		if s.big > 0 && id == 2 {
			var b strings.Builder
			b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
			for b.Len() < s.big {
				b.WriteString("all work and no play makes jack a dull boy. ")
			}
			b.WriteString(`"}}}}`)
			line("agent", b.String())
		}
		for k := 0; k < 98 && n < s.records-1; k++ {
			line("agent", fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of answer %d, a few words"}}}}`, k, id))
			n++
		}
		line("agent", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, id))
		n++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return largest, count
}

// run is one measured run of the binary.
type run struct {
	wall, cpu time.Duration
	rss       int64 // peak resident set, KiB
}

// measure runs bin with args, stdout to the file out ("" discards it),
// and returns its wall time, CPU time and peak RSS, as rssSpawner
// reports them.
func measure(t testing.TB, bin, out string, args ...string) run {
	t.Helper()
	cmd := exec.Command(rssSpawner.Path(t), append([]string{bin}, args...)...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(pr)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("acpscope %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	var r run
	var cpuNS, wallNS int64
	if _, err := fmt.Sscan(string(report), &r.rss, &cpuNS, &wallNS); err != nil {
		t.Fatalf("the spawner reported %q: %v", report, err)
	}
	r.wall, r.cpu = time.Duration(wallNS), time.Duration(cpuNS)
	return r
}

// step is one command of the round trip and its runs.
type step struct {
	name string
	runs []run
}

// roundTrip makes a capture of shape s in dir, then runs dump, export
// (capture and JSONL), import of the dump and dump of the import, reps
// times in turn. It checks that the round trip gives back the dump byte
// for byte and that nothing was lost, and returns the steps (dump first)
// and the largest message's size.
func roundTrip(t testing.TB, dir string, s sizes, reps int) ([]step, int) {
	t.Helper()
	bin := plainBinary(t)
	gen := filepath.Join(dir, "gen.jsonl")
	largest, count := genJSONL(t, gen, s)
	src := filepath.Join(dir, "src.acpscope")
	if out, err := exec.Command(bin, "import", gen, "-o", src).CombinedOutput(); err != nil {
		t.Fatalf("import of the generated session: %v\n%s", err, out)
	}
	os.Remove(gen)
	steps := []step{{name: "dump --format jsonl"}, {name: "export (capture)"}, {name: "export --format jsonl"},
		{name: "import (of the dump)"}, {name: "dump of the import"}}
	dump, dump2 := filepath.Join(dir, "dump.jsonl"), filepath.Join(dir, "dump2.jsonl")
	for rep := 0; rep < reps; rep++ {
		exported, imported, jsonl := filepath.Join(dir, "exported.acpscope"), filepath.Join(dir, "imported.acpscope"), filepath.Join(dir, "exported.jsonl")
		for _, p := range []string{exported, imported, jsonl} {
			os.Remove(p)
		}
		runs := []run{
			measure(t, bin, dump, "dump", src, "--format", "jsonl"),
			measure(t, bin, "", "export", src, "-o", exported),
			measure(t, bin, jsonl, "export", src, "--format", "jsonl", "-o", "-"),
			measure(t, bin, "", "import", dump, "-o", imported),
			measure(t, bin, dump2, "dump", imported, "--format", "jsonl"),
		}
		for i := range steps {
			steps[i].runs = append(steps[i].runs, runs[i])
		}
		if rep == 0 {
			sameFiles(t, "dump → import → dump", dump2, dump)
			sameFiles(t, "export --format jsonl (unredacted: nothing to redact)", jsonl, dump)
			if n := lines(t, dump); n != count {
				t.Errorf("%s: the dump holds %d records, want %d", s.name, n, count)
			}
		}
		for _, p := range []string{exported, imported, jsonl, dump2} {
			os.Remove(p)
		}
	}
	return steps, largest
}

// sameFiles fails unless the files at got and want hold the same bytes.
func sameFiles(t testing.TB, what, got, want string) {
	t.Helper()
	g, err := os.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	w, err := os.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	gb, wb := make([]byte, 1<<20), make([]byte, 1<<20)
	for off := int64(0); ; off += int64(len(gb)) {
		gn, gerr := io.ReadFull(g, gb)
		wn, werr := io.ReadFull(w, wb)
		if !bytes.Equal(gb[:gn], wb[:wn]) {
			t.Fatalf("%s: the files differ in the MiB at byte %d", what, off)
		}
		if gerr != nil || werr != nil {
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s: the files differ in length", what)
			}
			return
		}
	}
}

// lines counts the lines of a file.
func lines(t testing.TB, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err != nil {
			return n
		}
	}
}

// rssLimit is the memory target: 64 MiB and twice the largest message.
func rssLimit(largest int) int64 { return 64<<10 + 2*int64(largest)>>10 }

// TestLargeRoundTrip: export, import and dump → import → dump of many
// records and of a large message lose nothing, give the same bytes back,
// and each process peaks within 64 MiB plus twice the largest message.
// Their times are logged against dump's, not judged (the machine is
// shared): BenchmarkExportImport measures them. The heavy sizes (a
// million records, 200 MB) run unless -short; the light ones always.
func TestLargeRoundTrip(t *testing.T) {
	cases := light
	if !testing.Short() {
		cases = append(cases, heavy...)
	}
	for _, s := range cases {
		t.Run(s.name, func(t *testing.T) {
			steps, largest := roundTrip(t, t.TempDir(), s, 1)
			limit := rssLimit(largest)
			for _, st := range steps {
				r := st.runs[0]
				t.Logf("%-24s %6.2f s (%.2f× dump)  peak RSS %4d MiB (limit %d MiB)", st.name, r.wall.Seconds(),
					r.wall.Seconds()/steps[0].runs[0].wall.Seconds(), r.rss>>10, limit>>10)
				if r.rss > limit {
					t.Errorf("%s peaked at %d MiB, over 64 MiB + 2× the largest message (%d MiB)", st.name, r.rss>>10, limit>>10)
				}
			}
		})
	}
}
