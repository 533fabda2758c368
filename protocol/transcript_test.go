package protocol

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), got, *update, "-update")
}

func TestTranscriptGoose(t *testing.T) {
	msgs := loadDevtools(t, "goose-1.37.0.json")
	tr := BuildTranscript(msgs)
	if len(tr.Sessions) != 1 {
		t.Fatalf("got %d sessions, want 1", len(tr.Sessions))
	}
	s := tr.Sessions[0]
	if tr.Session("20260612_3") != s || tr.Session("nope") != nil {
		t.Error("Transcript.Session lookup")
	}
	if s.ID != "20260612_3" || s.Origin != "new" || s.Title == "" {
		t.Errorf("session = %q origin %q title %q", s.ID, s.Origin, s.Title)
	}
	var prompts, tools int
	for _, turn := range s.Turns {
		if turn.PromptSeq != 0 {
			prompts++
			if turn.StopReason != "end_turn" {
				t.Errorf("turn %d stop reason %q", turn.Index, turn.StopReason)
			}
		}
		for _, it := range turn.Items {
			if it.Kind == ItemTool {
				tools++
				if it.Tool.Status != "completed" {
					t.Errorf("tool %s status %q", it.Tool.ID, it.Tool.Status)
				}
			}
		}
	}
	if _, turn, it := tr.Locate(88); it == nil || it.Call == nil || it.Call.Method != "fs/read_text_file" || turn.PromptSeq != 63 {
		t.Errorf("Locate(88) = turn %+v item %+v", turn, it)
	}
	if _, turn, it := tr.Locate(53); it != nil || turn == nil || turn.EndSeq != 53 {
		t.Errorf("Locate(53) = turn %+v item %+v", turn, it)
	}
	if s, _, _ := tr.Locate(1); s != nil {
		t.Error("initialize located in a session")
	}
	turns := s.PromptTurns()
	if len(turns) != 2 || !strings.HasPrefix(turns[0].AgentText(), "Hi there!") || len(turns[1].ToolCalls()) != 12 {
		t.Errorf("prompt turns %d, first answer %.20q, tools in the second %d", len(turns), turns[0].AgentText(), len(turns[1].ToolCalls()))
	}
	if prompts != 2 || tools != 12 {
		t.Errorf("prompts %d tools %d, want 2 and 12", prompts, tools)
	}
	if tr.Version != 1 || !strings.HasPrefix(tr.Client, "JetBrains.WebStorm") {
		t.Errorf("version %d client %q", tr.Version, tr.Client)
	}
	var buf bytes.Buffer
	if err := RenderMarkdown(&buf, tr, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "goose-1.37.0.transcript.md", buf.Bytes())
}

func TestTranscriptShapes(t *testing.T) {
	sid := `"sessionId":"s1"`
	upd := func(u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{` + sid + `,"update":` + u + `}}`
	}
	msgs := lines(t,
		"client", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}`,
		"agent", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"image":true}},"agentInfo":{"name":"fake","version":"1"}}}`,
		"client", `{"jsonrpc":"2.0","id":1,"method":"session/load","params":{`+sid+`,"cwd":"/","mcpServers":[]}}`,
		"agent", upd(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"old question"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"old answer"}}`),
		"agent", upd(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"second question"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second answer"}}`),
		"agent", `{"jsonrpc":"2.0","id":1,"result":{}}`,
		"client", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{`+sid+`,"prompt":[{"type":"text","text":"fix it"},{"type":"image","mimeType":"image/png","data":"AAAA"}]}}`,
		"agent", upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"think"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hel"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"lo"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"Next"}}`),
		"agent", upd(`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`),
		"agent", upd(`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"completed"}]}`),
		"agent", upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit","kind":"edit","status":"pending"}`),
		"agent", `{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{`+sid+`,"toolCall":{"toolCallId":"t1","title":"Edit"},"options":[{"optionId":"ok","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}`,
		"client", `{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"selected","optionId":"ok"}}}`,
		"agent", `{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{`+sid+`,"path":"/a.go","content":"x"}}`,
		"client", `{"jsonrpc":"2.0","id":"w1","result":null}`,
		"agent", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}`),
		"agent", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"diff","path":"/a.go","oldText":"y","newText":"x"},{"type":"terminal","terminalId":"term1"}],"locations":[{"path":"/a.go","line":3}]}`),
		"agent", upd(`{"sessionUpdate":"current_mode_update","currentModeId":"code"}`),
		"agent", upd(`{"sessionUpdate":"mystery_update","x":1}`),
		"client", `{"jsonrpc":"2.0","method":"session/cancel","params":{`+sid+`}}`,
		"agent", `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}`,
	)
	tr := BuildTranscript(msgs)
	if len(tr.Sessions) != 1 {
		t.Fatalf("sessions: %d", len(tr.Sessions))
	}
	s := tr.Sessions[0]
	if len(s.Turns) != 3 || !s.Turns[0].Replayed || !s.Turns[1].Replayed || s.Turns[2].StopReason != "cancelled" || s.Turns[2].CancelSeq == 0 {
		t.Fatalf("turns: %+v", s.Turns)
	}
	for _, turn := range s.Turns[:2] {
		if len(turn.Items) != 2 {
			t.Errorf("replayed turn %d has %d items, want a question and an answer", turn.Index, len(turn.Items))
		}
		for _, it := range turn.Items {
			if !it.Replayed {
				t.Errorf("replayed item not marked: %+v", it)
			}
		}
	}
	kinds := ""
	for _, it := range s.Turns[2].Items {
		kinds += string(it.Kind) + " "
	}
	if want := "thought agent agent plan plan tool permission call info unknown "; kinds != want {
		t.Errorf("items %q, want %q", kinds, want)
	}
	items := s.Turns[2].Items
	if items[1].Text != "Hello" || items[2].Text != "Next" {
		t.Errorf("message split by messageId: %q %q", items[1].Text, items[2].Text)
	}
	tool := items[5].Tool
	if tool.Status != "completed" || strings.Join(tool.Statuses, ",") != "pending,in_progress,completed" || len(tool.Content) != 2 || tool.Content[0].OldText != "y" || tool.Locations[0].Line != 3 {
		t.Errorf("tool = %+v", tool)
	}
	if o, ok := items[6].Permission.Chosen(); !ok || o.Kind != "allow_once" {
		t.Errorf("permission = %+v", items[6].Permission)
	}
	if len(s.Plans) != 2 || s.Plan.Entries[0].Status != "completed" || s.Mode != "code" {
		t.Errorf("plans %d latest %+v mode %q", len(s.Plans), s.Plan, s.Mode)
	}
	if !strings.Contains(s.Turns[2].Prompt[1].Summary(), "image image/png") {
		t.Errorf("image summary %q", s.Turns[2].Prompt[1].Summary())
	}
	var buf bytes.Buffer
	if err := RenderMarkdown(&buf, tr, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "shapes.transcript.md", buf.Bytes())
}

// TestTranscriptV2 decodes by the negotiated version: under the v2 draft
// the prompt response only acknowledges and state_update ends the turn.
func TestTranscriptV2(t *testing.T) {
	upd := func(u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":` + u + `}}`
	}
	msgs := lines(t,
		"client", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`,
		"agent", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`,
		"client", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}`,
		"agent", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s2"}}`,
		"client", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"text","text":"go"}]}}`,
		"agent", `{"jsonrpc":"2.0","id":2,"result":{}}`,
		"agent", upd(`{"sessionUpdate":"state_update","state":"running"}`),
		"agent", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"do"}}`),
		"agent", upd(`{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"done"}]}`),
		"agent", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"ls","status":"in_progress"}`),
		"agent", upd(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t1","content":{"type":"terminal","terminalId":"x"}}`),
		"agent", upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`),
	)
	tr := BuildTranscript(msgs)
	if tr.Version != 2 {
		t.Fatalf("version %d", tr.Version)
	}
	turn := tr.Sessions[0].Turns[len(tr.Sessions[0].Turns)-1]
	if turn.StopReason != "end_turn" || turn.EndSeq != 12 {
		t.Errorf("turn ended %q at %d, want end_turn at 12", turn.StopReason, turn.EndSeq)
	}
	if turn.AgentText() != "done" || len(turn.ToolCalls()) != 1 || len(turn.ToolCalls()[0].Content) != 1 {
		t.Errorf("v2 message and tool content: %q %+v", turn.AgentText(), turn.ToolCalls())
	}
	if got := withRule(Lint(msgs, LintOptions{Finished: true}), "acp/stop-reason"); len(got) != 0 {
		t.Errorf("v2 prompt acknowledgement judged as a v1 result: %s", dump(got))
	}
	msgs = append(msgs, FromLine(13, 2, []byte(upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":"finished"}`))))
	if got := withRule(Lint(msgs, LintOptions{Finished: true}), "acp/stop-reason"); len(got) != 1 || got[0].Seqs[0] != 13 {
		t.Errorf("v2 state_update stop reason not checked: %s", dump(got))
	}
}
