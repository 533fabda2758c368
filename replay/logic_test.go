package replay

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), got, *update, "-update")
}

// conv builds a paired conversation from lines "c {json}" (client sent)
// and "a {json}" (agent sent), 10 ms apart.
func conv(lines ...string) []protocol.Msg {
	var msgs []protocol.Msg
	for i, l := range lines {
		dir := wire.DirClient
		if l[0] == 'a' {
			dir = wire.DirAgent
		}
		msgs = append(msgs, Split(uint64(i+1), int64(i)*10e6, dir, []byte(l[2:]))...)
	}
	protocol.Pair(msgs)
	return msgs
}

func chunk(session, text string) string {
	return `a {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + session + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
}

func demoConv(session, stop string, chunks ...string) []protocol.Msg {
	lines := []string{
		`c {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`,
		`a {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"demo","version":"1.0"}}}`,
		`c {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{"sessionId":"` + session + `"}}`,
		`c {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + session + `","prompt":[{"type":"text","text":"hi"}]}}`,
	}
	for _, c := range chunks {
		lines = append(lines, chunk(session, c))
	}
	lines = append(lines, `a {"jsonrpc":"2.0","id":2,"result":{"stopReason":"`+stop+`"}}`)
	return conv(lines...)
}

func TestPair(t *testing.T) {
	msgs := demoConv("s1", "end_turn", "Hel", "lo")
	resp, peer := msgs[len(msgs)-1], protocol.Pair(msgs)
	if resp.Method != "session/prompt" || peer[len(msgs)-1] != 4 || resp.Session != "s1" {
		t.Errorf("prompt response paired as %+v", resp)
	}
	if msgs[3].Session != "s1" {
		t.Errorf("session/new response attributed to %q, want s1", msgs[3].Session)
	}
	if got := Sessions(msgs); strings.Join(got, ",") != "s1" {
		t.Errorf("sessions %v", got)
	}
}

func TestDiffJSON(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		ignore   Ignore
		want     []string
	}{
		{"equal modulo key order and spacing", `{"a":1,"b":[1,2]}`, `{ "b":[1,2], "a":1 }`, nil, nil},
		{"changed scalar", `{"result":{"stopReason":"end_turn"}}`, `{"result":{"stopReason":"refusal"}}`, nil,
			[]string{`result.stopReason: "end_turn" → "refusal"`}},
		{"added and removed", `{"a":1,"b":2}`, `{"a":1,"c":3}`, nil, []string{"b: removed (was 2)", "c: added 3"}},
		{"array growth", `{"x":[1]}`, `{"x":[1,2]}`, nil, []string{"x.1: added 2"}},
		{"type change", `{"x":{"y":1}}`, `{"x":"y"}`, nil, []string{`x: {"y":1} → "y"`}},
		{"numbers by text", `{"n":1.0}`, `{"n":1}`, nil, []string{"n: 1.0 → 1"}},
		{"default volatile paths", `{"id":1,"params":{"sessionId":"a","_meta":{"t":1},"createdAt":"x","v":1}}`,
			`{"id":9,"params":{"sessionId":"b","_meta":{"t":2},"createdAt":"y","v":1}}`, Ignore(DefaultIgnore), nil},
		{"--ignore glob", `{"result":{"usage":{"in":1},"stopReason":"end_turn"}}`, `{"result":{"usage":{"in":2},"stopReason":"end_turn"}}`,
			Ignore{"result.usage.*"}, nil},
		{"invalid JSON compares as text", `{oops`, `{oops!`, nil, []string{`(text): {oops → {oops!`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range DiffJSON([]byte(tt.old), []byte(tt.new), tt.ignore, nil) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestBinder(t *testing.T) {
	b := NewBinder()
	learned := b.Learn(
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"old-s","modes":{"currentModeId":"ask","availableModes":[{"id":"ask"}]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":7,"result":{"sessionId":"new-s","modes":{"currentModeId":"ask","availableModes":[{"id":"code"}]}}}`))
	if len(learned) != 1 || learned[0].Old != "old-s" || learned[0].New != "new-s" || learned[0].Path != "result.sessionId" {
		t.Fatalf("learned %+v, want only result.sessionId old-s→new-s", learned)
	}
	b.Learn([]byte(`{"params":{"update":{"toolCallId":"tc-1","content":[{"terminalId":"term-1"}]}}}`),
		[]byte(`{"params":{"update":{"toolCallId":"tc-9","content":[{"terminalId":"term-9"}]}}}`))
	in := `{"jsonrpc":"2.0", "id":"old-s","method":"x","params":{"sessionId":"old-s","refs":["tc-1", "term-1"],"text":"old-s is a word here"}}`
	want := `{"jsonrpc":"2.0", "id":"old-s","method":"x","params":{"sessionId":"new-s","refs":["tc-9", "term-9"],"text":"old-s is a word here"}}`
	if got := string(b.Apply([]byte(in))); got != want {
		t.Errorf("Apply\n got  %s\n want %s", got, want)
	}
	if r := b.Reverse(); r.Map("new-s") != "old-s" {
		t.Errorf("Reverse maps new-s to %q", r.Map("new-s"))
	}
	if got := string(SetID([]byte(`{"id": 3 ,"method":"m","params":{"id":3}}`), []byte(`"x"`))); got != `{"id": "x" ,"method":"m","params":{"id":3}}` {
		t.Errorf("SetID: %s", got)
	}
}

// TestBinderWrapped: identifiers inside proxy-chain wrappers, at one and
// two hops, are learned at their inner paths and rewritten in place; the
// outer JSON-RPC id is left to the drivers.
func TestBinderWrapped(t *testing.T) {
	tests := []struct {
		name           string
		recorded, live string
		in, want       string
		path           string
	}{
		{"one hop",
			`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"tc-old"}}}}`,
			`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"tc-new"}}}}`,
			`{"jsonrpc":"2.0","id":"tc-old","method":"_proxy/successor/request","params":{"method":"session/request_permission","params":{"toolCall":{"toolCallId":"tc-old"}}}}`,
			`{"jsonrpc":"2.0","id":"tc-old","method":"_proxy/successor/request","params":{"method":"session/request_permission","params":{"toolCall":{"toolCallId":"tc-new"}}}}`,
			"params.params.update.toolCallId"},
		{"two hops",
			`{"jsonrpc":"2.0","id":4,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"terminal/output","params":{"terminalId":"t-old"}}}}`,
			`{"jsonrpc":"2.0","id":9,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"terminal/output","params":{"terminalId":"t-new"}}}}`,
			`{"jsonrpc":"2.0","id":5,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"terminal/kill","params":{"terminalId":"t-old"}}}}`,
			`{"jsonrpc":"2.0","id":5,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"terminal/kill","params":{"terminalId":"t-new"}}}}`,
			"params.params.params.terminalId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBinder()
			learned := b.Learn([]byte(tt.recorded), []byte(tt.live))
			if len(learned) != 1 || learned[0].Path != tt.path {
				t.Fatalf("learned %+v, want one binding at %s", learned, tt.path)
			}
			if got := string(b.Apply([]byte(tt.in))); got != tt.want {
				t.Errorf("Apply\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

// TestBinderOneOldIDTwoNew: when one recorded id meets two live ones at
// different paths, the binding is the same on every run (the last path in
// order wins), so a diff does not change from run to run.
func TestBinderOneOldIDTwoNew(t *testing.T) {
	recorded := []byte(`{"result":{"models":{"currentModelId":"m-old","availableModels":[{"modelId":"x"},{"modelId":"m-old"}]}}}`)
	live := []byte(`{"result":{"models":{"currentModelId":"m-cur","availableModels":[{"modelId":"x"},{"modelId":"m-avail"}]}}}`)
	for i := 0; i < 50; i++ {
		b := NewBinder()
		learned := b.Learn(recorded, live)
		if got := b.Map("m-old"); got != "m-cur" || len(learned) != 2 || learned[0].New != "m-avail" {
			t.Fatalf("run %d: m-old binds to %q, learned %+v; want m-cur, learned in path order", i, got, learned)
		}
	}
}

func TestFoldAndSummary(t *testing.T) {
	msgs := demoConv("s1", "end_turn", "a", "b", "c")
	items := Fold(msgs, false)
	if len(items) != 7 {
		t.Fatalf("%d items, want 7 (three chunks folded)", len(items))
	}
	run := items[5]
	if run.Text != "abc" || len(run.Msgs) != 3 || run.Summary() != "session/update agent_message_chunk ×3" {
		t.Errorf("run text %q summary %q", run.Text, run.Summary())
	}
	if s := items[6].Summary(); s != "session/prompt result end_turn" {
		t.Errorf("prompt result summary %q", s)
	}
	if n := len(Fold(msgs, true)); n != 9 {
		t.Errorf("strict fold gave %d items, want 9", n)
	}
}

func TestCompare(t *testing.T) {
	old := demoConv("s1", "end_turn", "Hel", "lo ", "world")
	tests := []struct {
		name   string
		new    []protocol.Msg
		strict bool
		want   int // mismatching entries
		golden string
	}{
		{"same text chunked differently", demoConv("s2", "end_turn", "Hello", " world"), false, 0, ""},
		{"strict sees the chunking", demoConv("s2", "end_turn", "Hello", " world"), true, 3, ""},
		{"one change", demoConv("s2", "refusal", "Hel", "lo ", "world"), false, 1, "compare-one-change.txt"},
		{"missing and extra", conv(
			`c {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`,
			`a {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"demo","version":"1.1"}}}`,
			`c {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
			`a {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"authentication required"}}`,
			`a {"jsonrpc":"2.0","method":"_demo/notice","params":{}}`,
		), false, 6, "compare-missing-extra.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := Compare(Fold(old, tt.strict), Fold(tt.new, tt.strict), CompareOptions{Ignore: Ignore(DefaultIgnore), Binder: NewBinder(), Learn: true})
			var buf bytes.Buffer
			WriteEntries(&buf, entries, "recorded", "replayed")
			if got := Mismatches(entries); got != tt.want {
				t.Errorf("%d mismatches, want %d\n%s", got, tt.want, buf.String())
			}
			if tt.golden != "" {
				golden(t, tt.golden, buf.Bytes())
			}
		})
	}
}

func TestMermaid(t *testing.T) {
	msgs := demoConv("s1", "end_turn", "Hel", "lo;", "#1")
	msgs = append(msgs, conv(`a {"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no"}}`)...)
	msgs[len(msgs)-1].Method = "fs/read_text_file"
	var buf bytes.Buffer
	if err := WriteMermaid(&buf, msgs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "agent_message_chunk ×3") {
		t.Errorf("chunk run not folded:\n%s", buf.String())
	}
	golden(t, "mermaid-demo.txt", buf.Bytes())
}

func TestDiffConversationsGolden(t *testing.T) {
	a := demoConv("s1", "end_turn", "Hel", "lo")
	b := conv(
		`c {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}}}}`,
		`a {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"demo","version":"1.1"}}}`,
		`c {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{"sessionId":"other"}}`,
		`c {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"other","prompt":[{"type":"text","text":"hi"}]}}`,
		chunk("other", "Hello"),
		`a {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	)
	d := DiffConversations(a, b, CompareOptions{Ignore: Ignore(DefaultIgnore)}, false)
	if d.Same() {
		t.Fatal("different conversations reported the same")
	}
	var text bytes.Buffer
	d.WriteText(&text, "a.acpscope", "b.acpscope")
	golden(t, "diff-text.txt", text.Bytes())
	js, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "diff-json.json", append(js, '\n'))
	if same := DiffConversations(a, a, CompareOptions{Ignore: Ignore(DefaultIgnore)}, false); !same.Same() {
		t.Error("a conversation differs from itself")
	}
}

// FuzzBinderApply: rebinding edits only string values, leaves valid JSON
// valid, and changes nothing when no learned id occurs.
func FuzzBinderApply(f *testing.F) {
	f.Add([]byte(`{"id":"s1","params":{"sessionId":"s1","x":["s1",{"t":"s1"}]}}`))
	f.Add([]byte(`["s1", 1, null, "s\u0031"]`))
	f.Add([]byte(`"s1"`))
	b := NewBinder()
	b.Set("s1", `new "quoted" <id>`)
	f.Fuzz(func(t *testing.T, doc []byte) {
		out := b.Apply(doc)
		if json.Valid(doc) && !json.Valid(out) {
			t.Fatalf("invalid JSON after rebinding: %q -> %q", doc, out)
		}
		if !bytes.Contains(doc, []byte("s")) && !bytes.Equal(doc, out) {
			t.Fatalf("changed a document without the id: %q -> %q", doc, out)
		}
	})
}

func TestMyersAlignment(t *testing.T) {
	tests := []struct{ a, b string }{
		{"", ""}, {"abc", ""}, {"", "abc"}, {"abc", "abc"}, {"abcabba", "cbabac"},
		{"axbxc", "abc"}, {"abc", "axbxc"}, {"aaaa", "aa"}, {"xyz", "abc"},
	}
	for _, tt := range tests {
		ka, kb := strings.Split(tt.a, ""), strings.Split(tt.b, "")
		if tt.a == "" {
			ka = nil
		}
		if tt.b == "" {
			kb = nil
		}
		pairs, ok := myers(ka, kb, 100)
		if !ok {
			t.Fatalf("%q/%q: gave up", tt.a, tt.b)
		}
		// Every index appears once, in order; matches are equal keys; the
		// number of matches is the LCS length.
		ia, ib, matches := 0, 0, 0
		for _, p := range pairs {
			if p[0] >= 0 {
				if p[0] != ia {
					t.Fatalf("%q/%q: a index %d out of order in %v", tt.a, tt.b, p[0], pairs)
				}
				ia++
			}
			if p[1] >= 0 {
				if p[1] != ib {
					t.Fatalf("%q/%q: b index %d out of order in %v", tt.a, tt.b, p[1], pairs)
				}
				ib++
			}
			if p[0] >= 0 && p[1] >= 0 {
				if ka[p[0]] != kb[p[1]] {
					t.Fatalf("%q/%q: matched unequal keys in %v", tt.a, tt.b, pairs)
				}
				matches++
			}
		}
		if ia != len(ka) || ib != len(kb) || matches != lcsLen(ka, kb) {
			t.Errorf("%q/%q: covered %d/%d %d/%d, %d matches want %d", tt.a, tt.b, ia, len(ka), ib, len(kb), matches, lcsLen(ka, kb))
		}
	}
	if _, ok := myers(strings.Split("abcdefgh", ""), strings.Split("stuvwxyz", ""), 3); ok {
		t.Error("did not give up beyond maxD")
	}
}

func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestAlignLargeWithTwoChanges(t *testing.T) {
	methods := []string{"session/update", "fs/read_text_file", "terminal/output"}
	mk := func(n int, extraAt int) []Item {
		var items []Item
		for i := 0; i < n; i++ {
			if i == extraAt {
				items = append(items, Item{Msgs: []*protocol.Msg{{Dir: wire.DirAgent, Kind: wire.KindNotification, Method: "_extra"}}})
			}
			items = append(items, Item{Msgs: []*protocol.Msg{{Dir: wire.DirAgent, Kind: wire.KindNotification, Method: methods[i*7%3]}}})
		}
		return items
	}
	// Changes near both ends leave Myers a middle of ~50 000 items.
	a, b := mk(50000, 49900), mk(50000, 100)
	// A quadratic alignment would need 2.5e9 steps (and memory to match)
	// and not end within waitLimit.
	aligned := make(chan [][2]int, 1)
	go func() { aligned <- Align(a, b) }()
	var pairs [][2]int
	select {
	case pairs = <-aligned:
	case <-time.After(waitLimit):
		t.Fatalf("aligning 50 000 items did not end within %v", waitLimit)
	}
	gaps := 0
	for _, p := range pairs {
		if p[0] < 0 || p[1] < 0 {
			gaps++
		}
	}
	if gaps != 2 || len(pairs) != 50002 {
		t.Errorf("%d pairs with %d gaps, want 50002 with 2", len(pairs), gaps)
	}
}

// TestLatencyColumns: small latencies keep their digits and the delta is
// the difference of the two numbers printed beside it.
func TestLatencyColumns(t *testing.T) {
	us := time.Microsecond
	for _, tt := range []struct {
		a, b       time.Duration
		fa, fb, dl string
	}{
		{48 * us, 153 * us, "48µs", "153µs", "+105µs"},
		{149 * us, 151 * us, "149µs", "151µs", "+2µs"},
		{102700 * us, 101650 * us, "102.7ms", "101.7ms", "-1ms"},
		{2*time.Second + 345*time.Millisecond, 2 * time.Second, "2.345s", "2s", "-345ms"},
		{0, 60 * time.Nanosecond, "0s", "60ns", "+60ns"},
	} {
		l := LatencyDelta{A: tt.a, B: tt.b, CountA: 1, CountB: 1}
		if fa, fb, dl := fmtLatency(tt.a, 1), fmtLatency(tt.b, 1), delta(l); fa != tt.fa || fb != tt.fb || dl != tt.dl {
			t.Errorf("%v → %v printed %s → %s %s, want %s → %s %s", tt.a, tt.b, fa, fb, dl, tt.fa, tt.fb, tt.dl)
		}
	}
}

// TestDiffAltered compares a clean conversation with one a fault plan
// altered: entries compare what each side received (a dropped chunk is
// missing, a duplicate extra, a rewritten one changed, never its
// original), and the alterations are listed with their rules.
func TestDiffAltered(t *testing.T) {
	a := demoConv("s1", "end_turn", "Hel", "lo", "!")
	b := demoConv("s1", "end_turn", "Hel", "lo", "!")
	plan := func(id uint64, rule, action, stage string) *protocol.Fault {
		return &protocol.Fault{ID: id, Rule: rule, Action: action, Stage: stage, By: protocol.ByPlan}
	}
	// b: 6 Hel, 7 lo, 8 !, 9 the answer. "lo" is dropped, "!" rewritten.
	b[6].Fault = plan(1, "lose", protocol.ActionDrop, protocol.StageDropped)
	b[7].Fault = plan(2, "shout", protocol.ActionRewrite, protocol.StageReplaced)
	copyOf := b[7]
	copyOf.Seq, copyOf.Body = 10, []byte(strings.Replace(string(copyOf.Body), `"!"`, `"!!!"`, 1))
	copyOf.Fault = plan(2, "shout", protocol.ActionRewrite, protocol.StageForwarded)
	b = append(b[:8], append([]protocol.Msg{copyOf}, b[8:]...)...)

	d := DiffConversations(a, b, CompareOptions{Ignore: Ignore(DefaultIgnore)}, true)
	if d.Same() {
		t.Fatal("an altered conversation reported the same")
	}
	if len(d.AlteredA) != 0 || len(d.AlteredB) != 3 {
		t.Fatalf("altered: A %d, B %d, want 0 and 3", len(d.AlteredA), len(d.AlteredB))
	}
	var text bytes.Buffer
	d.WriteText(&text, "clean.acpscope", "faulted.acpscope")
	golden(t, "diff-altered.txt", text.Bytes())
	js, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"alteredB":[{"seq":7,"dir":"agent","method":"session/update","fault":{"id":1,"action":"drop"`) {
		t.Errorf("JSON lacks the dropped message:\n%s", js)
	}
}

// TestMermaidAltered checks that the diagram marks what acpscope altered
// and never joins a dropped chunk's text into the run the client saw.
func TestMermaidAltered(t *testing.T) {
	msgs := demoConv("s1", "end_turn", "Hel", "lo", "!")
	msgs[6].Fault = &protocol.Fault{ID: 1, Action: protocol.ActionDrop, Stage: protocol.StageDropped, Rule: "lose", By: protocol.ByPlan}
	var buf bytes.Buffer
	if err := WriteMermaid(&buf, msgs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"agent_message_chunk ⚑ dropped by rule lose", "A-)C: session/update agent_message_chunk\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diagram lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "×") {
		t.Errorf("a dropped chunk was folded into a run:\n%s", out)
	}
}
