package telemetry

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/demo"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tee hands what passes through it to the capture writer, as the proxy's
// pumps do, and closes the stream with it. It records before it forwards:
// in-process peers answer at once, and a response could otherwise be
// recorded before the request it answers.
type tee struct {
	w      *capture.Writer
	stream capture.Stream
	out    io.WriteCloser
	once   sync.Once
}

func (t *tee) Write(b []byte) (int, error) {
	t.w.Chunk(0, t.stream, time.Now().UnixNano(), b)
	return t.out.Write(b)
}

func (t *tee) Close() error {
	t.once.Do(func() { t.w.EndStream(0, t.stream, time.Now().UnixNano()) })
	return t.out.Close()
}

// recordDemo runs the demo conversation between the demo client and agent
// through a capture writer, as the stdio proxy would, and returns the
// finished capture's path.
func recordDemo(t *testing.T, watch func(*capture.Writer), opts demo.ClientOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{Meta: testMeta, NoSync: true, NoFeed: true})
	if err != nil {
		t.Fatal(err)
	}
	watch(w)
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	agentOut := &tee{w: w, stream: capture.StreamAgent, out: toClientW}
	agentLog := &tee{w: w, stream: capture.StreamStderr, out: nopCloser{io.Discard}}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() { // the agent; ends when the client closes its input
		err := demo.RunAgent(ctx, toAgentR, agentOut, demo.AgentOptions{Log: agentLog})
		agentLog.Close()
		agentOut.Close()
		done <- err
	}()
	if _, err := demo.RunClient(ctx, toClientR, &tee{w: w, stream: capture.StreamClient, out: toAgentW}, opts); err != nil {
		t.Fatalf("demo conversation: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("demo agent: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// The acceptance test of the one-builder design: the spans a live run
// streams and those an export of its capture builds are the same spans,
// ids, parents, times, attributes and events included.
func TestLiveAndExportGiveTheSameSpans(t *testing.T) {
	tests := []struct {
		name string
		opts demo.ClientOptions
	}{
		{"default demo", demo.ClientOptions{}},
		{"cancelled turn with a traceparent", demo.ClientOptions{Cancel: true,
			TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", TraceState: "congo=t61rcWkgMzE"}},
		{"two sessions and a load", demo.ClientOptions{Sessions: 2, Load: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			livePipe, liveExp := memPipeline(t, Config{})
			var watchNotes map[string]string
			path := recordDemo(t, func(w *capture.Writer) {
				if err := Watch(w, livePipe, BuilderOptions{Bodies: true}); err != nil {
					t.Fatal(err)
				}
			}, tc.opts)
			r, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			watchNotes = r.Meta().Notes
			if got := watchNotes["otlp.spans"]; got == "" || watchNotes["otlp.skipped"] != "" {
				t.Fatalf("the capture's notes say %v: want the span count and nothing skipped", watchNotes)
			}

			exportPipe, exportExp := memPipeline(t, Config{})
			st, err := Export(r, exportPipe, BuilderOptions{Bodies: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			live, exported := flatten(liveExp.GetSpans()), flatten(exportExp.GetSpans())
			if st.Sent != int64(len(exported)) || st.Lost != 0 {
				t.Errorf("export stats %+v for %d spans", st, len(exported))
			}
			if len(live) < 10 {
				t.Fatalf("only %d spans from the live run", len(live))
			}
			checkDemoTree(t, liveExp.GetSpans(), tc.opts.TraceParent)
			if a, b := dumpFlat(live), dumpFlat(exported); a != b {
				t.Fatalf("live and exported spans differ:\nlive:\n%s\nexported:\n%s", a, b)
			}
		})
	}
}

// checkDemoTree checks the shape of the demo's spans: every turn ended
// with a stop reason (in the traceparent's trace when one was sent),
// every request and tool call is inside its turn (or the session/load
// replaying it), and every request was answered.
func checkDemoTree(t *testing.T, spans tracetest.SpanStubs, traceparent string) {
	t.Helper()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	turns := 0
	for _, s := range spans {
		if attr(s, "acp.unanswered") != "<absent>" {
			t.Errorf("%s (record %s) was left unanswered", s.Name, attr(s, "acp.seq"))
		}
		switch {
		case s.Name == "session/prompt":
			turns++
			if attr(s, "acp.stop_reason") == "<absent>" {
				t.Errorf("turn %s has no stop reason", attr(s, "acp.seq"))
			}
			if traceparent != "" && !strings.Contains(traceparent, s.SpanContext.TraceID().String()) {
				t.Errorf("turn %s is in trace %s, not the traceparent's %s", attr(s, "acp.seq"), s.SpanContext.TraceID(), traceparent)
			}
		case strings.HasPrefix(s.Name, "fs/"), strings.HasPrefix(s.Name, "terminal/"), strings.HasPrefix(s.Name, "execute_tool"):
			p, ok := byID[s.Parent.SpanID()]
			if !ok || (p.Name != "session/prompt" && p.Name != "session/load") {
				t.Errorf("%s (record %s) is not inside a turn", s.Name, attr(s, "acp.seq"))
			}
		case s.Name == "session/request_permission":
			if p, ok := byID[s.Parent.SpanID()]; !ok || !strings.HasPrefix(p.Name, "execute_tool") {
				t.Errorf("the permission request %s is not inside its tool call", attr(s, "acp.seq"))
			}
		}
	}
	if turns == 0 {
		t.Errorf("no turns among %s", names(spans))
	}
}
