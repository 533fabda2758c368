package wire

import "testing"

func TestPairer(t *testing.T) {
	p := NewPairer()
	p.Request(Pending{Dir: DirClient, ID: "1", Seq: 1, Method: "initialize"})
	p.Request(Pending{Dir: DirAgent, ID: "1", Seq: 2, Method: "fs/read_text_file", SessionID: "s"})
	p.Request(Pending{Dir: DirClient, ID: `"1"`, Seq: 3, Method: "session/new"})

	tests := []struct {
		name    string
		dir     Dir // direction the response travels
		id      string
		wantSeq uint64
		wantOK  bool
	}{
		{"agent answers client's 1", DirAgent, "1", 1, true},
		{"already answered", DirAgent, "1", 0, false},
		{"client answers agent's 1", DirClient, "1", 2, true},
		{"string id is not number id", DirAgent, `"1"`, 3, true},
		{"null id pairs nothing", DirAgent, "null", 0, false},
		{"unknown", DirAgent, "9", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, ok := p.Response(tt.dir, []byte(tt.id))
			if ok != tt.wantOK || req.Seq != tt.wantSeq {
				t.Fatalf("Response(%v, %s) = seq %d, %v; want %d, %v", tt.dir, tt.id, req.Seq, ok, tt.wantSeq, tt.wantOK)
			}
		})
	}
	if n := len(p.Outstanding()); n != 0 {
		t.Errorf("%d requests outstanding, want 0", n)
	}
}

func TestPairerDuplicate(t *testing.T) {
	p := NewPairer()
	p.Request(Pending{Dir: DirClient, ID: "5", Seq: 1})
	displaced, dup := p.Request(Pending{Dir: DirClient, ID: "5", Seq: 2})
	if !dup || displaced.Seq != 1 {
		t.Fatalf("duplicate not reported: %v %v", displaced, dup)
	}
}
