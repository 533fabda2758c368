package wire

import (
	"strings"
	"testing"
)

func TestWalk(t *testing.T) {
	doc := ` {"a":[1,{"b\u0022":"x"}],"c":null} `
	var got []string
	err := Walk([]byte(doc), func(path []string, start, end int) bool {
		got = append(got, strings.Join(path, ".")+"="+doc[start:end])
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`={"a":[1,{"b\u0022":"x"}],"c":null}`,
		`a=[1,{"b\u0022":"x"}]`,
		`a.0=1`,
		`a.1={"b\u0022":"x"}`,
		`a.1.b"="x"`,
		`c=null`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk visited\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	skipped := 0
	Walk([]byte(doc), func(path []string, _, _ int) bool { skipped++; return len(path) == 0 })
	if skipped != 3 {
		t.Errorf("returning false should skip children: visited %d values, want 3", skipped)
	}
	if err := Walk([]byte(`{"a":`), func([]string, int, int) bool { return true }); err != ErrNotJSON {
		t.Errorf("Walk of invalid JSON = %v, want ErrNotJSON", err)
	}
}
