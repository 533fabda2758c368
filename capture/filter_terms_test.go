package capture

import (
	"reflect"
	"testing"
)

func TestTextTerms(t *testing.T) {
	tests := []struct {
		expr string
		want []TextTerm
	}{
		{"", nil},
		{"method:session/prompt", nil},
		{"timeout", []TextTerm{{"timeout", false}}},
		{`dir:agent "Exact Text" or word`, []TextTerm{{"Exact Text", true}, {"word", false}}},
		{"alpha not beta", []TextTerm{{"alpha", false}}},
		{"(a or b) and !c", []TextTerm{{"a", false}, {"b", false}}},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.expr)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		if got := f.TextTerms(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("TextTerms(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}
