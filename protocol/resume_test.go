package protocol

import "testing"

func TestResumesSession(t *testing.T) {
	tests := []struct {
		method string
		want   bool
	}{
		{"session/load", true},
		{"session/resume", true},
		{"session/new", false},
		{"session/fork", false},
		{"session/prompt", false},
		{"initialize", false},
		{"", false},
		{"Session/Load", false},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			if got := ResumesSession(tt.method); got != tt.want {
				t.Errorf("ResumesSession(%q) = %v, want %v", tt.method, got, tt.want)
			}
			if tt.want && (!OpensSession(tt.method) || MintsSession(tt.method)) {
				t.Errorf("%q resumes a session, so it must open one without minting it", tt.method)
			}
		})
	}
}
