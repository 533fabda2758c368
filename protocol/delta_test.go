package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if !decode([]byte(s), &v) {
		t.Fatalf("bad JSON in test: %s", s)
	}
	return v
}

// TestMergeSeedExamples runs every example of seed 002's delta algorithm.
func TestMergeSeedExamples(t *testing.T) {
	tests := []struct {
		name, output, delta, want string // want "" means an error
	}{
		{"different types", `1`, `["hello"]`, ""},
		{"numbers add", `1`, `2`, `3`},
		{"strings concatenate", `"hello"`, `"there"`, `"hellothere"`},
		{"objects merge", `{"a":1,"b":"hello"}`, `{"b":"world","c":2}`, `{"a":1,"b":"helloworld","c":2}`},
		{"value + null", `{"a":[1]}`, `null`, `{"a":[1]}`},
		{"null + value", `null`, `"x"`, `"x"`},
		{"array + []", `["a","b"]`, `[]`, `["a","b"]`},
		{"[] + array", `[]`, `["a","b"]`, `["a","b"]`},
		{"[] + leading null", `[]`, `[null,"general","Kenobi"]`, `["general","Kenobi"]`},
		{"non-empty arrays combine", `["hello","there"]`, `["general","Kenobi"]`, `["hello","theregeneral","Kenobi"]`},
		{"leading null appends", `["hello","there"]`, `[null,"general","Kenobi"]`, `["hello","there","general","Kenobi"]`},
		{"[] + array again", `[]`, `["general","Kenobi"]`, `["general","Kenobi"]`},
		{"null output drops leading null", `null`, `[null,"general","Kenobi"]`, `["general","Kenobi"]`},
		{"absent key drops leading null", `{}`, `{"k":[null,"x"]}`, `{"k":["x"]}`},
		{"nested object in array", `[{"t":"a"}]`, `[{"t":"b"},{"t":"c"}]`, `[{"t":"ab"},{"t":"c"}]`},
		{"decimals add exactly", `0.1`, `0.2`, `0.3`},
		{"big integers", `9007199254740993`, `1`, `9007199254740994`},
		{"string + number", `"a"`, `1`, ""},
		{"object + array", `{}`, `[]`, ""},
		{"booleans", `true`, `false`, ""},
		{"nested type clash", `{"a":"x"}`, `{"a":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, delta := mustJSON(t, tt.output), mustJSON(t, tt.delta)
			before := mustMarshal(t, out)
			got, err := Merge(out, delta)
			if tt.want == "" {
				if !errors.Is(err, ErrCombine) {
					t.Fatalf("Merge(%s, %s) = %v, %v; want ErrCombine", tt.output, tt.delta, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Merge(%s, %s): %v", tt.output, tt.delta, err)
			}
			if !EqualJSON(got, mustJSON(t, tt.want)) {
				t.Errorf("Merge(%s, %s) = %s, want %s", tt.output, tt.delta, mustMarshal(t, got), tt.want)
			}
			if after := mustMarshal(t, out); after != before {
				t.Errorf("Merge modified its output argument: %s became %s", before, after)
			}
		})
	}
}

func TestMergeAllSeedRun(t *testing.T) {
	deltas := []any{mustJSON(t, `{"text":"Howd"}`), mustJSON(t, `{"text":"y back"}`), mustJSON(t, `{"text":" at ya!"}`)}
	got, err := MergeAll(deltas)
	if err != nil {
		t.Fatal(err)
	}
	if !EqualJSON(got, mustJSON(t, `{"text":"Howdy back at ya!"}`)) {
		t.Errorf("got %s", mustMarshal(t, got))
	}
	if _, err := MergeAll([]any{mustJSON(t, `"a"`), mustJSON(t, `1`)}); !errors.Is(err, ErrCombine) {
		t.Errorf("MergeAll of a type clash: %v, want ErrCombine", err)
	}
}

func mustMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzMerge checks the algorithm's invariants on arbitrary JSON: no panic,
// null is the identity on the right (and on the left for non-arrays),
// string concatenation is associative, number addition commutes, and the
// inputs are never modified.
func FuzzMerge(f *testing.F) {
	seeds := [][3]string{
		{`1`, `2`, `3`},
		{`"a"`, `"b"`, `"c"`},
		{`{"a":1,"b":"x"}`, `{"b":"y","c":[1]}`, `{"c":[null,2]}`},
		{`["hello","there"]`, `[null,"general"]`, `["Kenobi"]`},
		{`[]`, `[null]`, `null`},
		{`1e400`, `1`, `2`},
		{`0.1`, `0.2`, `0.3`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var x, y, z any
		if !decode(a, &x) || !decode(b, &y) || !decode(c, &z) {
			return
		}
		xs := string(marshalAny(x))
		got, err := Merge(x, y)
		if string(marshalAny(x)) != xs {
			t.Fatalf("Merge modified its output argument")
		}
		if err == nil && got == nil && (x != nil || y != nil) {
			if _, isArr := y.([]any); !isArr {
				t.Fatalf("Merge(%s, %s) = null", a, b)
			}
		}
		if r, err := Merge(x, nil); err != nil || !EqualJSON(r, x) {
			t.Fatalf("x + null != x for %s: %v", a, err)
		}
		if _, isArr := x.([]any); !isArr {
			if r, err := Merge(nil, x); err != nil || !EqualJSON(r, x) {
				t.Fatalf("null + x != x for %s: %v", a, err)
			}
		}
		xs1, ok1 := x.(string)
		ys1, ok2 := y.(string)
		zs1, ok3 := z.(string)
		if ok1 && ok2 && ok3 {
			l, _ := Merge(got, zs1)
			yz, _ := Merge(ys1, zs1)
			r, _ := Merge(xs1, yz)
			if !EqualJSON(l, r) {
				t.Fatalf("string concatenation not associative: %q %q %q", xs1, ys1, zs1)
			}
		}
		if isNumber(x) && isNumber(y) {
			xy, err1 := Merge(x, y)
			yx, err2 := Merge(y, x)
			if (err1 == nil) != (err2 == nil) || !EqualJSON(xy, yx) {
				t.Fatalf("number addition does not commute: %s %s", a, b)
			}
		}
	})
}

func marshalAny(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(v)
	return buf.Bytes()
}
