package protocol

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Merge applies a progress delta to an in-progress output, as the delta
// algorithm of the pre-alpha Agent Communication Protocol states it
// (seed 002): numbers add, strings concatenate, objects merge key by key,
// null is the identity on either side, an empty output array takes the
// delta array, and non-empty arrays combine the output's last element
// with the delta's first and append the rest; a leading null in the delta
// means "append without combining", and is dropped when the output is
// [], null or absent. Values of different types cannot be combined.
//
// Values are decoded JSON (nil, bool, string, json.Number or float64,
// []any, map[string]any). Merge never modifies its arguments.
func Merge(output, delta any) (any, error) {
	switch {
	case delta == nil:
		return clone(output), nil
	case output == nil:
		if d, ok := delta.([]any); ok {
			return cloneArray(dropLeadingNull(d)), nil
		}
		return clone(delta), nil
	}
	switch o := output.(type) {
	case string:
		if d, ok := delta.(string); ok {
			return o + d, nil
		}
	case json.Number, float64:
		if isNumber(delta) {
			return addNumbers(o, delta)
		}
	case map[string]any:
		if d, ok := delta.(map[string]any); ok {
			return mergeObjects(o, d)
		}
	case []any:
		if d, ok := delta.([]any); ok {
			return mergeArrays(o, d)
		}
	case bool:
		if _, ok := delta.(bool); ok {
			return nil, fmt.Errorf("booleans: %w (the algorithm defines no combination)", ErrCombine)
		}
	}
	return nil, fmt.Errorf("%s + %s: %w", typeName(output), typeName(delta), ErrCombine)
}

// MergeAll folds deltas into an empty output, in order.
func MergeAll(deltas []any) (any, error) {
	var out any
	for i, d := range deltas {
		var err error
		if out, err = Merge(out, d); err != nil {
			return out, fmt.Errorf("delta %d: %w", i+1, err)
		}
	}
	return out, nil
}

func mergeObjects(o, d map[string]any) (any, error) {
	out := make(map[string]any, len(o)+len(d))
	for k, v := range o {
		out[k] = clone(v)
	}
	for k, dv := range d {
		merged, err := Merge(o[k], dv) // an absent key merges like null
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = merged
	}
	return out, nil
}

func mergeArrays(o, d []any) (any, error) {
	if len(o) == 0 {
		return cloneArray(dropLeadingNull(d)), nil
	}
	out := cloneArray(o)
	if len(d) == 0 {
		return out, nil
	}
	if d[0] == nil { // append without combining
		return append(out, cloneArray(d[1:])...), nil
	}
	last, err := Merge(out[len(out)-1], d[0])
	if err != nil {
		return nil, fmt.Errorf("last element: %w", err)
	}
	out[len(out)-1] = last
	return append(out, cloneArray(d[1:])...), nil
}

func dropLeadingNull(d []any) []any {
	if len(d) > 0 && d[0] == nil {
		return d[1:]
	}
	return d
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64:
		return true
	}
	return false
}

func numberText(v any) string {
	switch n := v.(type) {
	case json.Number:
		return n.String()
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return ""
}

// addNumbers adds exactly: integers of any size stay integers, and other
// numbers add as exact decimals, so 0.1 + 0.2 is 0.3.
func addNumbers(a, b any) (any, error) {
	x, okx := numberRat(a)
	y, oky := numberRat(b)
	if !okx || !oky {
		f, g := numberFloat(a), numberFloat(b)
		return json.Number(strconv.FormatFloat(f+g, 'g', -1, 64)), nil
	}
	sum := new(big.Rat).Add(x, y)
	if sum.IsInt() {
		return json.Number(sum.Num().String()), nil
	}
	return json.Number(ratDecimal(sum)), nil
}

// ratDecimal prints a sum of decimals; it stays exact up to 40 places,
// far beyond any number a JSON peer can hold.
func ratDecimal(r *big.Rat) string {
	s := r.FloatString(40)
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s
}

// numberRat parses a JSON number exactly, refusing huge exponents (a
// hostile "1e999999999" would otherwise cost gigabytes).
func numberRat(v any) (*big.Rat, bool) {
	t := numberText(v)
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(t[i+1:], "+"))
		if err != nil || exp > 400 || exp < -400 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(t)
}

func numberFloat(v any) float64 {
	f, _ := strconv.ParseFloat(numberText(v), 64)
	return f
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func clone(v any) any {
	switch x := v.(type) {
	case []any:
		return cloneArray(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	}
	return v
}

func cloneArray(a []any) []any {
	out := make([]any, len(a))
	for i, e := range a {
		out[i] = clone(e)
	}
	return out
}

// EqualJSON compares decoded JSON values, numbers by value (1 equals 1.0).
func EqualJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number, float64:
		if !isNumber(b) {
			return false
		}
		p, ok1 := numberRat(a)
		q, ok2 := numberRat(b)
		if !ok1 || !ok2 {
			return numberFloat(a) == numberFloat(b)
		}
		return p.Cmp(q) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !EqualJSON(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// marshalValue renders a decoded JSON value for messages.
func marshalValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
