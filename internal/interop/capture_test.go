package interop

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// checkCapture opens the run's capture and rebuilds both byte streams
// from its records: every line that crossed must be stored exactly, in
// order, with nothing added. It also looks for the agent's stderr line.
func checkCapture(t *testing.T, o *outcome, stderrLine string) {
	t.Helper()
	r, err := capture.Open(o.capture)
	if err != nil {
		t.Errorf("opening the capture: %v\n%s", err, o.logs())
		return
	}
	defer r.Close()
	var toAgent, toClient bytes.Buffer
	var stderr []string
	var recs []capture.Record
	if err := r.Scan(1, func(rec *capture.Record) bool {
		recs = append(recs, *rec)
		return true
	}); err != nil {
		t.Fatalf("scanning the capture: %v", err)
	}
	for _, rec := range recs {
		if rec.Flags&wire.FlagBatchMember != 0 {
			continue // its bytes are part of the batch line, stored once
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatalf("body of record %d: %v", rec.Seq, err)
		}
		if int64(len(body)) != rec.Size {
			t.Errorf("record %d: size %d, body %d bytes", rec.Seq, rec.Size, len(body))
		}
		if rec.Kind == wire.KindStderr {
			stderr = append(stderr, string(body))
			continue
		}
		line := append(body, '\n')
		if rec.Flags&wire.FlagPartial != 0 {
			line = body
		}
		switch rec.Dir {
		case wire.DirClient:
			toAgent.Write(line)
		case wire.DirAgent:
			toClient.Write(line)
		}
		if !rec.Kind.IsProtocol() {
			t.Errorf("record %d (%s) is not a JSON-RPC message: %s", rec.Seq, rec.Kind, body)
		}
	}
	if !bytes.Equal(toAgent.Bytes(), o.clientWrote) {
		t.Errorf("capture client→agent differs from the wire (%d vs %d bytes)\n%s",
			toAgent.Len(), len(o.clientWrote), firstDifference(toAgent.Bytes(), o.clientWrote))
	}
	if !bytes.Equal(toClient.Bytes(), o.agentWrote) {
		t.Errorf("capture agent→client differs from the wire (%d vs %d bytes)\n%s",
			toClient.Len(), len(o.agentWrote), firstDifference(toClient.Bytes(), o.agentWrote))
	}
	if stderrLine != "" && !containsLine(stderr, stderrLine) {
		t.Errorf("the agent's stderr line %q is not in the capture (stderr records: %q)", stderrLine, stderr)
	}
	if m := r.Meta(); m.Loss.Messages != 0 || m.Exit == nil || m.Exit.Code != 0 {
		t.Errorf("capture metadata: loss %+v, exit %+v", m.Loss, m.Exit)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.TrimRight(l, "\r\n") == want {
			return true
		}
	}
	return false
}
