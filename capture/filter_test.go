package capture

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

func TestParseFilterCanonical(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", ""},
		{"   ", ""},
		{"method:session/prompt", "method:session/prompt"},
		{"method:session/prompt or error", "(method:session/prompt or error)"},
		{"a b c", "((a and b) and c)"},
		{"a or b and c", "(a or (b and c))"},
		{"(a or b) c", "((a or b) and c)"},
		{"not a b", "(not a and b)"},
		{"!a", "not a"},
		{"!(a or b)", "not (a or b)"},
		{"NOT a AND b OR c", "((not a and b) or c)"},
		{"dir:editor", "dir:client"},
		{"dir:AGENT", "dir:agent"},
		{"kind:Invalid", "kind:invalid"},
		{"ERROR", "error"},
		{`"Hello World"`, `"Hello World"`},
		{`"a \"b\" \\c"`, `"a \"b\" \\c"`},
		{`method:"session/prompt"`, "method:session/prompt"},
		{`params.x="a b"`, `params.x="a b"`},
		{"size>10KB", "size>10000"},
		{"size<=1.5KiB", "size<=1536"},
		{"size>2mib", "size>2097152"},
		{"size>2k", "size>2048"}, // a bare K is KiB, as gc --max-total reads it
		{"latency>2s", "latency>2s"},
		{"latency>1500", "latency>1.5s"},
		{"latency<150ms", "latency<150ms"},
		{"seq>=10", "seq>=10"},
		{"id:7", "id:7"},
		{"session:abc", "session:abc"},
		{"update:agent_message_chunk", "update:agent_message_chunk"},
		{"flag:CRLF", "flag:crlf"},
		{"conn:3", "conn:3"},
		{"params.update.sessionUpdate=plan", "params.update.sessionUpdate=plan"},
		{"result.stopReason=cancelled", "result.stopReason=cancelled"},
		{"1=2", "1=2"},
		{"method:a:b", "method:a:b"},
		{`method:""`, `method:""`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			f, err := ParseFilter(tt.src)
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tt.src, err)
			}
			if got := f.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			again, err := ParseFilter(f.String())
			if err != nil || again.String() != tt.want {
				t.Fatalf("reparse of %q: %v, %q", f.String(), err, again)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct {
		src  string
		pos  int
		want string // a fragment of the message
	}{
		{"(a", 2, "expected ')'"},
		{"a)", 1, "unbalanced ')'"},
		{"a or", 4, "expected a term"},
		{"and a", 0, "expected a term"},
		{`"abc`, 0, "closing '\"'"},
		{`x "abc`, 2, "closing '\"'"},
		{"method:", 7, "expected a value after method:"},
		{"dir:up", 4, "expected client or agent"},
		{"kind:frob", 5, "unknown kind"},
		{"methd:x", 0, "unknown field \"methd\""},
		{"size>abc", 5, "expected a size"},
		{"size", 4, "expected a comparison after size"},
		{"latency>soon", 8, "expected a duration"},
		{"latency>-2s", 8, "expected a duration"},
		{"a (b or )", 8, "expected a term, found ')'"},
		{"not", 3, "expected a term"},
		{"params.x=", 9, "expected a value"},
		{"flag:shiny", 5, "unknown flag"},
		{"seq>x", 4, "sequence number"},
		{"conn:x", 5, "connection number"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := ParseFilter(tt.src)
			var fe *FilterError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFilter(%q) = %v, want a *FilterError", tt.src, err)
			}
			if fe.Pos != tt.pos || !strings.Contains(fe.Msg, tt.want) {
				t.Fatalf("got pos %d %q, want pos %d containing %q", fe.Pos, fe.Msg, tt.pos, tt.want)
			}
		})
	}
}

// filterRec builds a record from a wire line the way the store would.
func filterRec(seq uint64, dir wire.Dir, line string) *Record {
	m := wire.Classify([]byte(line))
	return &Record{
		Msg: protocol.Msg{Seq: seq, Dir: dir, Kind: m.Kind, Flags: m.Flags, ID: m.ID, Method: m.Method, Session: m.SessionID, Body: []byte(line)}, ErrorCode: m.ErrorCode, Size: int64(len(line)),
	}
}

func TestFilterMatch(t *testing.T) {
	prompt := filterRec(1, wire.DirClient, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"sess-123","prompt":[{"type":"text","text":"Hello World"}]}}`)
	chunk := filterRec(2, wire.DirAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-123","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`)
	plan := filterRec(3, wire.DirAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-123","update":{"sessionUpdate":"plan","entries":[]}}}`)
	resp := filterRec(4, wire.DirAgent, `{"jsonrpc":"2.0","id":7,"result":{"stopReason":"cancelled"}}`)
	resp.Method, resp.Session, resp.Peer, resp.Latency = "session/prompt", "sess-123", 1, 3*time.Second
	errResp := filterRec(5, wire.DirAgent, `{"id":"8","error":{"code":-32601,"message":"nope"}}`)
	errResp.Method, errResp.Peer, errResp.Latency = "fs/read_text_file", 9, 10*time.Millisecond
	stderr := &Record{Msg: protocol.Msg{Seq: 6, Dir: wire.DirAgent, Kind: wire.KindStderr, Body: []byte("panic: boom")}, Size: 11}
	garbage := filterRec(7, wire.DirAgent, `not json at all`)
	broken := filterRec(8, wire.DirAgent, `{"jsonrpc":`)
	big := filterRec(9, wire.DirClient, `{"jsonrpc":"2.0","method":"x","params":{"data":"`+strings.Repeat("A", 20000)+`"}}`)
	all := []*Record{prompt, chunk, plan, resp, errResp, stderr, garbage, broken, big}

	tests := []struct {
		filter string
		want   []uint64
	}{
		{"", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"method:session/prompt", []uint64{1, 4}},
		{"method:session/*", []uint64{1, 2, 3, 4}},
		{"method:*/read_*", []uint64{5}},
		{"dir:client", []uint64{1, 9}},
		{"dir:agent", []uint64{2, 3, 4, 5, 7, 8}},
		{"kind:request", []uint64{1}},
		{"kind:notification", []uint64{2, 3, 9}},
		{"kind:response", []uint64{4}},
		{"error", []uint64{5}},
		{"kind:stderr", []uint64{6}},
		{"kind:invalid", []uint64{7, 8}},
		{"kind:invalid-json", []uint64{8}},
		{"kind:nonprotocol", []uint64{7}},
		{"id:7", []uint64{1, 4}},
		{"id:8", []uint64{5}},
		{`id:"8"`, []uint64{5}},
		{"session:sess", []uint64{1, 2, 3, 4}},
		{"session:other", nil},
		{"update:agent_message_chunk", []uint64{2}},
		{"update:*", []uint64{2, 3}},
		{"size>10KB", []uint64{9}},
		{"size<12", []uint64{6, 8}},
		{"latency>2s", []uint64{4}},
		{"latency<1s", []uint64{5}},
		{"latency>5", []uint64{4, 5}},
		{"hello", []uint64{1}},
		{"HELLO", []uint64{1}},
		{"wOrLd", []uint64{1}},
		{"héllo", nil},
		{`"Hello World"`, []uint64{1}},
		{`"hello world"`, nil},
		{"boom", []uint64{6}},
		{"params.update.sessionUpdate=plan", []uint64{3}},
		{"result.stopReason=cancelled", []uint64{4}},
		{"params.prompt.0.type=text", []uint64{1}},
		{"params.prompt.1.type=text", nil},
		{"error.code=-32601", []uint64{5}},
		{"params.update.sessionUpdate=agent_*", []uint64{2}},
		{"dir:agent and not kind:invalid", []uint64{2, 3, 4, 5}},
		{"method:session/prompt or error", []uint64{1, 4, 5}},
		{"!dir:agent !kind:stderr", []uint64{1, 9}},
		{"(update:plan or update:agent_message_chunk) session:sess-1", []uint64{2, 3}},
		{"seq>=8", []uint64{8, 9}},
		{"flag:bad-version", []uint64{5}},
		{"conn:0", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"conn:1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, r := range all {
				if f.Match(r, nil) {
					got = append(got, r.Seq)
				}
			}
			if !equalFilterSeqs(got, tt.want) {
				t.Fatalf("matched %v, want %v", got, tt.want)
			}
		})
	}
}

func equalFilterSeqs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFilterLoadsBodyOnlyWhenNeeded(t *testing.T) {
	r := filterRec(1, wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	body := r.Body
	r.Body = nil
	tests := []struct {
		filter    string
		needsBody bool
		loads     int
	}{
		{"method:initialize dir:client", false, 0},
		{"method:nothing hello", true, 0}, // and short-circuits
		{"initialize", true, 1},
		{"initialize INITIALIZE params.x=1", true, 1}, // loaded once
		{"update:plan", true, 0},                      // not a session/update
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if f.NeedsBody() != tt.needsBody {
				t.Fatalf("NeedsBody() = %v", f.NeedsBody())
			}
			loads := 0
			f.Match(r, func() []byte { loads++; return body })
			if loads != tt.loads {
				t.Fatalf("body loaded %d times, want %d", loads, tt.loads)
			}
		})
	}
}

func TestFilterGrammarNamesEveryField(t *testing.T) {
	for _, name := range append(append([]string{}, filterFields...), filterComparisons...) {
		if !strings.Contains(FilterGrammar, name) {
			t.Errorf("FilterGrammar does not mention %q", name)
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"", "method:session/prompt or error", `dir:agent "quoted \" text" !kind:stderr`,
		"(a or b) c", "size>10KB latency<2s seq>=3", "params.update.sessionUpdate=plan",
		`params.x="a b"`, "not (x", "id:7 session:abc update:*", "1=2 =3 :4", "flag:crlf",
	} {
		f.Add(s)
	}
	r := filterRec(1, wire.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := ParseFilter(src)
		if err != nil {
			var fe *FilterError
			if !errors.As(err, &fe) || fe.Pos < 0 || fe.Pos > len(src) {
				t.Fatalf("ParseFilter(%q): bad error %v", src, err)
			}
			return
		}
		canon := flt.String()
		again, err := ParseFilter(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, src, err)
		}
		if again.String() != canon {
			t.Fatalf("canonical form changed: %q → %q", canon, again.String())
		}
		flt.Match(r, nil)
	})
}

// TestFilterFault checks fault: against records altered by a rule, by a
// hold and by hand: each name a Fault carries selects it, and a message
// acpscope left alone never matches.
func TestFilterFault(t *testing.T) {
	plain := filterRec(1, wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`)
	dropped := filterRec(2, wire.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	dropped.Fault = &protocol.Fault{ID: 1, Action: protocol.ActionDrop, Stage: protocol.StageDropped, Rule: "Lose-Answers", By: protocol.ByPlan}
	late := filterRec(3, wire.DirAgent, `{"jsonrpc":"2.0","method":"session/update"}`)
	late.Fault = &protocol.Fault{ID: 2, Action: protocol.ActionDelay, Stage: protocol.StageForwarded, Rule: "slow-agent", By: protocol.ByPlan}
	held := filterRec(4, wire.DirClient, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	held.Fault = &protocol.Fault{ID: 3, Action: protocol.ActionEdit, Stage: protocol.StageForwarded, By: protocol.ByIntercept}
	sent := filterRec(5, wire.DirClient, `{"jsonrpc":"2.0","method":"session/cancel"}`)
	sent.Fault = &protocol.Fault{ID: 4, Action: protocol.ActionSend, Stage: protocol.StageInjected, By: protocol.BySend}
	all := []*Record{plain, dropped, late, held, sent}

	tests := []struct {
		filter string
		want   []uint64
	}{
		{"fault:*", []uint64{2, 3, 4, 5}},
		{"not fault:*", []uint64{1}},
		{"fault:drop", []uint64{2}},
		{"fault:dropped", []uint64{2}},
		{"fault:forwarded", []uint64{3, 4}},
		{"fault:injected", []uint64{5}},
		{"fault:plan", []uint64{2, 3}},
		{"fault:intercept", []uint64{4}},
		{"fault:send", []uint64{5}},
		{"fault:slow-*", []uint64{3}},
		{"fault:lose-answers", []uint64{2}},
		{"fault:LOSE-*", []uint64{2}},
		{"fault:kill", nil},
		{"fault:* dir:client", []uint64{4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, r := range all {
				if f.Match(r, nil) {
					got = append(got, r.Seq)
				}
			}
			if !equalFilterSeqs(got, tt.want) {
				t.Fatalf("matched %v, want %v", got, tt.want)
			}
			back, err := ParseFilter(f.String())
			if err != nil || back.String() != f.String() {
				t.Fatalf("%q reads back as %v, %v", f.String(), back, err)
			}
		})
	}
}
