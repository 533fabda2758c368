package wire

import "testing"

func TestPairer(t *testing.T) {
	p := NewPairer[uint64]()
	p.Request(DirClient, []byte("1"), 1)
	p.Request(DirAgent, []byte("1"), 2)
	p.Request(DirClient, []byte(`"1"`), 3)
	if seq, ok := p.InFlight(DirClient, []byte(`"1"`)); !ok || seq != 3 {
		t.Fatalf(`InFlight(client, "1") = %d, %v; want 3, true`, seq, ok)
	}
	if _, ok := p.InFlight(DirAgent, []byte(`"1"`)); ok {
		t.Fatal(`InFlight(agent, "1") found the client's request`)
	}

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
		{"no id pairs nothing", DirAgent, "", 0, false},
		{"unknown", DirAgent, "9", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, ok := p.Response(tt.dir, []byte(tt.id))
			if ok != tt.wantOK || seq != tt.wantSeq {
				t.Fatalf("Response(%v, %s) = seq %d, %v; want %d, %v", tt.dir, tt.id, seq, ok, tt.wantSeq, tt.wantOK)
			}
		})
	}
	if n := len(p.Outstanding()); n != 0 {
		t.Errorf("%d requests outstanding, want 0", n)
	}
}

func TestPairerDuplicate(t *testing.T) {
	p := NewPairer[uint64]()
	p.Request(DirClient, []byte("5"), 1)
	displaced, dup := p.Request(DirClient, []byte("5"), 2)
	if !dup || displaced != 1 {
		t.Fatalf("duplicate not reported: %v %v", displaced, dup)
	}
	if left := p.Outstanding(); len(left) != 1 || left[0] != 2 {
		t.Fatalf("Outstanding = %v, want [2]", left)
	}
}
