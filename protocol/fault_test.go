package protocol

import "testing"

// TestFaultString checks the one-line form dump, HAR and the report show
// for an altered record: alterations a run opted into carry their
// number, serve's own drops (ID 0) none.
func TestFaultString(t *testing.T) {
	tests := []struct {
		name string
		f    *Fault
		want string
	}{
		{"none", nil, ""},
		{"plan", &Fault{ID: 1, Action: ActionDelay, Stage: StageForwarded, Rule: "slow", By: ByPlan, Note: "delay 500ms"},
			"forwarded (delay by rule slow, #1): delay 500ms"},
		{"by hand", &Fault{ID: 3, Action: ActionDrop, Stage: StageDropped, By: ByIntercept}, "dropped (drop by intercept, #3)"},
		{"serve's bound", &Fault{Action: ActionDrop, Stage: StageDropped, By: ByServe, Note: "no client had opened the connection's stream"},
			"dropped (drop by serve): no client had opened the connection's stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
