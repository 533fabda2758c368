package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/wire"
	"go.yaml.in/yaml/v3"
)

// MaxPlanSize bounds a plan file: plans are written by hand.
const MaxPlanSize = 1 << 20

// maxPad bounds pad.size, so a typo cannot ask for a terabyte.
const maxPad = 1 << 30

// Parse reads a fault plan. name is used in errors (a file name). Every
// mistake names the line and the field; the first one is returned.
//
// The format (YAML):
//
//	seed: 42                 # optional: makes random choices repeatable
//	description: text        # optional
//	rules:
//	  - name: slow-updates   # optional, default rule-N
//	    match: method:session/update and dir:agent   # capture filter; default all
//	    after: 2             # let the first 2 matches through
//	    times: 5             # act on at most 5 matches
//	    probability: 0.3     # act on a match with this chance
//	    delay: 500ms         # or 100ms..2s (random, seeded)
//	    drop: true
//	    duplicate: 1         # extra copies
//	    reorder: 3           # shuffle matches within windows of 3
//	    rewrite: {params.update.sessionUpdate: bogus}   # JSON path: value
//	    replace: '{"jsonrpc":"2.0",…}'   # or a mapping, sent as JSON
//	    pad: {path: params.update.content.text, size: 16MiB}
//	    truncate: 40         # keep the first 40 bytes
//	    corrupt: 3           # overwrite 3 random bytes
//	    answer: {result: {…}}   # or {error: {code: -32603, message: …}}
//	    inject: {to: client, message: {…}}   # or a list of them
//	    close: true          # end the connection after this message
//	    kill: true           # kill the agent after this message
func Parse(name string, src []byte) (*Plan, error) {
	p := &parser{file: name}
	if len(src) > MaxPlanSize {
		return nil, p.errf(0, "", "the plan is %s; plans are at most %s", human.Size(int64(len(src))), human.Size(MaxPlanSize))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	plan := &Plan{Name: name, Source: bytes.Clone(src)}
	if err := p.plan(&doc, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

type parser struct {
	file string
}

func (p *parser) errf(line int, field, format string, args ...any) error {
	return &PlanError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// yamlError turns the YAML library's "yaml: line 3: …" into a PlanError.
func (p *parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ":"); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, strings.TrimSpace(after)
			}
		}
	}
	return p.errf(line, "", "not valid YAML: %s", msg)
}

func (p *parser) plan(doc *yaml.Node, plan *Plan) error {
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return p.errf(0, "", "the plan is empty; it needs `rules:` (see `acpscope help faults`)")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return p.errf(top.Line, "", "a plan is a mapping with `rules:` (and optionally `seed:`, `description:`)")
	}
	var rules *yaml.Node
	err := p.fields(top, "", func(key string, v *yaml.Node) error {
		switch key {
		case "seed":
			n, err := p.int64(v, "seed")
			plan.Seed, plan.HasSeed = n, true
			return err
		case "description":
			return p.scalar(v, "description")
		case "rules":
			rules = v
			return nil
		}
		return p.unknown(v, "", key, "seed, description, rules")
	})
	if err != nil {
		return err
	}
	if rules == nil {
		return p.errf(top.Line, "rules", "missing: a plan needs at least one rule")
	}
	if rules.Kind != yaml.SequenceNode || len(rules.Content) == 0 {
		return p.errf(rules.Line, "rules", "must be a list of rules (each starting with `- `)")
	}
	names := map[string]int{}
	for i, n := range rules.Content {
		r, err := p.rule(n, fmt.Sprintf("rules[%d]", i))
		if err != nil {
			return err
		}
		if r.Name == "" {
			r.Name = fmt.Sprintf("rule-%d", i+1)
		}
		if prev, dup := names[r.Name]; dup {
			return p.errf(n.Line, fmt.Sprintf("rules[%d].name", i), "%q is already the name of the rule on line %d", r.Name, prev)
		}
		names[r.Name] = n.Line
		plan.Rules = append(plan.Rules, r)
	}
	return nil
}

// fields calls fn for each key of mapping n, rejecting duplicates.
func (p *parser) fields(n *yaml.Node, at string, fn func(key string, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k.Line, at, "keys must be plain words")
		}
		if seen[k.Value] {
			return p.errf(k.Line, join(at, k.Value), "given twice")
		}
		seen[k.Value] = true
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func (p *parser) unknown(v *yaml.Node, at, key, known string) error {
	return p.errf(v.Line, join(at, key), "unknown field; known: %s", known)
}

const ruleFields = "name, match, after, times, probability, delay, drop, duplicate, reorder, rewrite, replace, pad, truncate, corrupt, answer, inject, close, kill"

func (p *parser) rule(n *yaml.Node, at string) (*Rule, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n.Line, at, "a rule is a mapping (match: …, then actions)")
	}
	r := &Rule{Line: n.Line}
	err := p.fields(n, at, func(key string, v *yaml.Node) error {
		f := join(at, key)
		var err error
		switch key {
		case "name":
			err = p.scalar(v, f)
			r.Name = v.Value
		case "match":
			err = p.match(v, f, r)
		case "after":
			r.After, err = p.count(v, f)
		case "times":
			r.Times, err = p.count(v, f)
		case "probability":
			r.Probability, err = p.probability(v, f)
		case "delay":
			r.Delay, err = p.delay(v, f)
		case "drop":
			r.Drop, err = p.bool(v, f)
		case "duplicate":
			r.Dup, err = p.count(v, f)
		case "reorder":
			r.Reorder, err = p.count(v, f)
			if err == nil && r.Reorder == 1 {
				err = p.errf(v.Line, f, "a window of 1 changes nothing; use 2 or more")
			}
		case "rewrite":
			r.Rewrite, err = p.rewrite(v, f)
		case "replace":
			r.Replace, err = p.message(v, f)
		case "pad":
			r.Pad, err = p.pad(v, f)
		case "truncate":
			r.Truncate, err = p.count(v, f)
		case "corrupt":
			r.Corrupt, err = p.count(v, f)
		case "answer":
			r.Answer, err = p.answer(v, f)
		case "inject":
			r.Inject, err = p.injects(v, f)
		case "close":
			r.Close, err = p.bool(v, f)
		case "kill":
			r.Kill, err = p.bool(v, f)
		default:
			err = p.unknown(v, at, key, ruleFields)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, p.checkRule(r, n, at)
}

// checkRule rejects rules that do nothing or contradict themselves.
func (p *parser) checkRule(r *Rule, n *yaml.Node, at string) error {
	acts := r.Drop || r.Dup > 0 || r.Reorder > 0 || !r.Delay.zero() || r.changesBody() || r.Answer != nil ||
		len(r.Inject) > 0 || r.Close || r.Kill
	switch {
	case !acts:
		return p.errf(n.Line, at, "the rule has no action; give one of delay, drop, duplicate, reorder, rewrite, replace, pad, truncate, corrupt, answer, inject, close, kill")
	case r.Drop && r.Answer != nil:
		return p.errf(n.Line, at, "drop and answer together: answer already keeps the request from the other side")
	case (r.Drop || r.Answer != nil) && (r.Dup > 0 || r.Reorder > 0 || !r.Delay.zero() || r.changesBody()):
		return p.errf(n.Line, at, "a dropped or answered message is not delivered, so delay, duplicate, reorder and body changes cannot apply to it")
	case r.Replace != nil && (len(r.Rewrite) > 0 || r.Pad != nil):
		return p.errf(n.Line, at, "replace sets the whole body; rewrite and pad would be lost")
	}
	return nil
}

func (p *parser) scalar(v *yaml.Node, f string) error {
	if v.Kind != yaml.ScalarNode {
		return p.errf(v.Line, f, "must be a single value")
	}
	return nil
}

func (p *parser) match(v *yaml.Node, f string, r *Rule) error {
	if err := p.scalar(v, f); err != nil {
		return err
	}
	flt, err := capture.ParseFilter(v.Value)
	if err != nil {
		var fe *capture.FilterError
		if errors.As(err, &fe) {
			return p.errf(v.Line, f, "at byte %d of %q: %s", fe.Pos, v.Value, fe.Msg)
		}
		return p.errf(v.Line, f, "%v", err)
	}
	r.Match = flt
	return nil
}

func (p *parser) int64(v *yaml.Node, f string) (int64, error) {
	if err := p.scalar(v, f); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, p.errf(v.Line, f, "%q is not a whole number", v.Value)
	}
	return n, nil
}

// count is a whole number from 0 to a million.
func (p *parser) count(v *yaml.Node, f string) (int, error) {
	n, err := p.int64(v, f)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1_000_000 {
		return 0, p.errf(v.Line, f, "%d is out of range (0 to 1000000)", n)
	}
	return int(n), nil
}

func (p *parser) bool(v *yaml.Node, f string) (bool, error) {
	if err := p.scalar(v, f); err != nil {
		return false, err
	}
	switch v.Value {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	return false, p.errf(v.Line, f, "%q is not true or false", v.Value)
}

func (p *parser) probability(v *yaml.Node, f string) (float64, error) {
	if err := p.scalar(v, f); err != nil {
		return 0, err
	}
	s := v.Value
	pct := strings.HasSuffix(s, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		x /= 100
	}
	if err != nil || math.IsNaN(x) || x <= 0 || x > 1 {
		return 0, p.errf(v.Line, f, "%q is not a probability above 0 and at most 1 (0.3, or 30%%)", s)
	}
	return x, nil
}

// delay is "500ms" or "100ms..2s".
func (p *parser) delay(v *yaml.Node, f string) (Delay, error) {
	if err := p.scalar(v, f); err != nil {
		return Delay{}, err
	}
	lo, hi, ranged := strings.Cut(v.Value, "..")
	min, err1 := time.ParseDuration(strings.TrimSpace(lo))
	var max time.Duration
	var err2 error
	if ranged {
		max, err2 = time.ParseDuration(strings.TrimSpace(hi))
	}
	const limit = time.Hour
	switch {
	case err1 != nil || err2 != nil:
		return Delay{}, p.errf(v.Line, f, "%q is not a duration: write 500ms, or a range 100ms..2s", v.Value)
	case min < 0 || max < 0 || min > limit || max > limit:
		return Delay{}, p.errf(v.Line, f, "%q is out of range (0 to 1h)", v.Value)
	case ranged && max <= min:
		return Delay{}, p.errf(v.Line, f, "in %q the upper bound must be above the lower", v.Value)
	}
	return Delay{Min: min, Max: max}, nil
}

// json converts a YAML value to JSON: mappings, lists and scalars as
// YAML reads them (a quoted "42" stays a string).
func (p *parser) json(v *yaml.Node, f string) (json.RawMessage, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return nil, p.errf(v.Line, f, "%v", err)
	}
	b, err := json.Marshal(jsonable(x))
	if err != nil {
		return nil, p.errf(v.Line, f, "cannot be written as JSON: %v", err)
	}
	return b, nil
}

// jsonable turns the map[string]any YAML decodes into (keys may be any
// type) into what encoding/json accepts.
func jsonable(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = jsonable(v)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, v := range t {
			m[fmt.Sprint(k)] = jsonable(v)
		}
		return m
	case []any:
		for i, v := range t {
			t[i] = jsonable(v)
		}
	}
	return x
}

// message is a whole message: a string taken as it is (it must be one
// line), or a mapping sent as JSON.
func (p *parser) message(v *yaml.Node, f string) ([]byte, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
		if strings.ContainsAny(v.Value, "\n") {
			return nil, p.errf(v.Line, f, "a message is one line; write it without newlines, or as a mapping")
		}
		return []byte(v.Value), nil
	}
	if v.Kind != yaml.MappingNode && v.Kind != yaml.SequenceNode {
		return nil, p.errf(v.Line, f, "must be a message: a JSON text in quotes, or a mapping")
	}
	return p.json(v, f)
}

func (p *parser) path(v *yaml.Node, s, f string) ([]string, error) {
	segs := strings.Split(s, ".")
	for _, seg := range segs {
		if seg == "" {
			return nil, p.errf(v.Line, f, "%q is not a JSON path: write names and indexes between dots (params.update.content.text)", s)
		}
	}
	return segs, nil
}

func (p *parser) rewrite(v *yaml.Node, f string) ([]Rewrite, error) {
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		return nil, p.errf(v.Line, f, "must map JSON paths to values (params.stopReason: refusal)")
	}
	var out []Rewrite
	err := p.fields(v, f, func(key string, val *yaml.Node) error {
		path, err := p.path(val, key, join(f, key))
		if err != nil {
			return err
		}
		j, err := p.json(val, join(f, key))
		if err != nil {
			return err
		}
		out = append(out, Rewrite{Path: path, Value: j})
		return nil
	})
	return out, err
}

func (p *parser) pad(v *yaml.Node, f string) (*Pad, error) {
	if v.Kind != yaml.MappingNode {
		return nil, p.errf(v.Line, f, "must be {path: params.update.content.text, size: 16MiB}")
	}
	pad := &Pad{}
	err := p.fields(v, f, func(key string, val *yaml.Node) error {
		switch key {
		case "path":
			if err := p.scalar(val, join(f, key)); err != nil {
				return err
			}
			var err error
			pad.Path, err = p.path(val, val.Value, join(f, key))
			return err
		case "size":
			if err := p.scalar(val, join(f, key)); err != nil {
				return err
			}
			n, err := human.ParseSize(val.Value)
			if err != nil || n <= 0 || n > maxPad {
				return p.errf(val.Line, join(f, key), "%q is not a size from 1 byte to 1GiB (16MiB, 500KB)", val.Value)
			}
			pad.Size = n
			return nil
		}
		return p.unknown(val, f, key, "path, size")
	})
	if err == nil && (pad.Path == nil || pad.Size == 0) {
		err = p.errf(v.Line, f, "needs both path and size")
	}
	return pad, err
}

func (p *parser) answer(v *yaml.Node, f string) (*Answer, error) {
	if v.Kind != yaml.MappingNode {
		return nil, p.errf(v.Line, f, "must be {result: …} or {error: {code: …, message: …}}")
	}
	a := &Answer{}
	err := p.fields(v, f, func(key string, val *yaml.Node) error {
		var err error
		switch key {
		case "result":
			a.Result, err = p.json(val, join(f, key))
		case "error":
			a.Error, err = p.json(val, join(f, key))
			if err == nil && !validError(a.Error) {
				err = p.errf(val.Line, join(f, key), "an error is {code: <integer>, message: <text>}")
			}
		default:
			err = p.unknown(val, f, key, "result, error")
		}
		return err
	})
	if err == nil && (a.Result == nil) == (a.Error == nil) {
		err = p.errf(v.Line, f, "give exactly one of result and error")
	}
	return a, err
}

func validError(b []byte) bool {
	var e struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil || e.Code == nil || e.Message == nil {
		return false
	}
	_, err := e.Code.Int64()
	return err == nil
}

func (p *parser) injects(v *yaml.Node, f string) ([]Inject, error) {
	if v.Kind == yaml.SequenceNode {
		var out []Inject
		for i, n := range v.Content {
			in, err := p.inject(n, fmt.Sprintf("%s[%d]", f, i))
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		}
		return out, nil
	}
	in, err := p.inject(v, f)
	return []Inject{in}, err
}

func (p *parser) inject(v *yaml.Node, f string) (Inject, error) {
	var in Inject
	if v.Kind != yaml.MappingNode {
		return in, p.errf(v.Line, f, "must be {to: agent|client, message: …}")
	}
	var to bool
	err := p.fields(v, f, func(key string, val *yaml.Node) error {
		var err error
		switch key {
		case "to":
			to = true
			in.Dir, err = p.to(val, join(f, key))
		case "message":
			in.Msg, err = p.message(val, join(f, key))
		default:
			err = p.unknown(val, f, key, "to, message")
		}
		return err
	})
	if err == nil && (!to || in.Msg == nil) {
		err = p.errf(v.Line, f, "needs both to (agent or client) and message")
	}
	return in, err
}

// to reads "agent" or "client", the side a message is sent to.
func (p *parser) to(v *yaml.Node, f string) (wire.Dir, error) {
	if err := p.scalar(v, f); err != nil {
		return 0, err
	}
	d, ok := ParseTo(v.Value)
	if !ok {
		return 0, p.errf(v.Line, f, "%q: write agent or client (the side that receives it)", v.Value)
	}
	return d, nil
}

// ParseTo reads the side a message is sent to ("agent", "client") as the
// direction it travels in.
func ParseTo(s string) (wire.Dir, bool) {
	switch s {
	case "agent":
		return wire.DirClient, true
	case "client":
		return wire.DirAgent, true
	}
	return 0, false
}
