package protocol

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/acpscope/acpscope/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaValidator validates messages against an ACP JSON schema the user
// supplies (the official schema/v1/schema.json). It finds the definition
// for each message through the schema's own annotations: every request,
// notification and response definition names its method in "x-method",
// and its handler in "x-side" ("agent" handles client→agent calls).
// Params are checked against …Request/…Notification definitions and
// results against …Response ones. It is safe for concurrent use.
type SchemaValidator struct {
	url      string
	compiler *jsonschema.Compiler
	defs     map[schemaKey]string // definition name by method, role, handler

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

type schemaKey struct {
	method  string
	role    string // "params" or "result"
	handler string // "agent", "client" or "" (either)
}

// maxSchemaErrors bounds the paths reported per message.
const maxSchemaErrors = 5

// NewSchemaValidator loads a JSON schema file.
func NewSchemaValidator(path string) (*SchemaValidator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening schema: %w", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("reading schema %s: %w: %v", path, ErrSchema, err)
	}
	v := &SchemaValidator{url: "file:///acp-schema.json", compiler: jsonschema.NewCompiler(), defs: map[schemaKey]string{}, compiled: map[string]*jsonschema.Schema{}}
	if err := v.compiler.AddResource(v.url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w: %v", path, ErrSchema, err)
	}
	root, _ := doc.(map[string]any)
	defs, _ := root["$defs"].(map[string]any)
	for name, d := range defs {
		dm, _ := d.(map[string]any)
		method, _ := dm["x-method"].(string)
		if method == "" {
			continue
		}
		role := "params"
		if strings.HasSuffix(name, "Response") {
			role = "result"
		} else if !strings.HasSuffix(name, "Request") && !strings.HasSuffix(name, "Notification") {
			continue
		}
		side, _ := dm["x-side"].(string)
		v.defs[schemaKey{method, role, side}] = name
		v.defs[schemaKey{method, role, ""}] = name
	}
	if len(v.defs) == 0 {
		return nil, fmt.Errorf("schema %s: %w: no $defs carry x-method annotations", path, ErrSchema)
	}
	return v, nil
}

// Definitions returns how many message definitions the schema provides.
func (v *SchemaValidator) Definitions() int {
	n := 0
	for k := range v.defs {
		if k.handler == "" {
			n++
		}
	}
	return n
}

func (v *SchemaValidator) schema(name string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.compiled[name]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(v.url + "#/$defs/" + name)
	if err != nil {
		return nil, err
	}
	v.compiled[name] = s
	return s, nil
}

// Lint validates every message of msgs: params of requests and
// notifications by method and direction, results of responses by the
// method of the request they answer. Methods the schema does not define
// are skipped.
func (v *SchemaValidator) Lint(msgs []Msg) []Finding {
	var out []Finding
	pending := pairs[string]{} // the request's method
	forEachUnit(msgs, func(u unit) {
		var (
			method, role string
			raw          []byte
			handler      = "agent"
		)
		switch u.Kind {
		case wire.KindRequest, wire.KindNotification:
			if u.Kind == wire.KindRequest {
				pending.of(u.Conn).Request(u.Dir, u.ID, u.Method)
			}
			method, role, raw = u.Method, "params", u.params()
			if u.Dir == wire.DirAgent {
				handler = "client"
			}
		case wire.KindResponse:
			method, _ = pending.of(u.Conn).Response(u.Dir, u.ID)
			role, raw = "result", u.result()
			if u.Dir == wire.DirClient {
				handler = "client"
			}
		default:
			return
		}
		name, ok := v.defs[schemaKey{method, role, handler}]
		if !ok {
			if name, ok = v.defs[schemaKey{method, role, ""}]; !ok {
				return
			}
		}
		if f, bad := v.validate(u.Seq, method, role, name, raw); bad {
			out = append(out, f)
		}
	})
	return out
}

func (v *SchemaValidator) validate(seq uint64, method, role, name string, raw []byte) (Finding, bool) {
	r := ruleIndex["schema/invalid"]
	finding := Finding{Rule: r.ID, Severity: r.Severity, Seqs: []uint64{seq}, Ref: r.Ref + " $defs/" + name}
	sch, err := v.schema(name)
	if err != nil {
		finding.Message = fmt.Sprintf("%s %s: cannot compile $defs/%s: %v", method, role, name, err)
		return finding, true
	}
	var inst any = nil
	if len(bytes.TrimSpace(raw)) > 0 {
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
			return finding, false
		}
	}
	err = sch.Validate(inst)
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return finding, false
	}
	finding.Message = fmt.Sprintf("%s %s do not match $defs/%s: %s", method, role, name, strings.Join(schemaPaths(verr), "; "))
	return finding, true
}

var schemaPrinter = message.NewPrinter(language.English)

// schemaPaths lists the leaf failures by instance path, "path: reason",
// alternatives of one path joined (a oneOf fails once per branch).
func schemaPaths(verr *jsonschema.ValidationError) []string {
	byPath := map[string][]string{}
	var paths []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		for _, c := range e.Causes {
			walk(c)
		}
		if len(e.Causes) > 0 {
			return
		}
		path := "/" + strings.Join(e.InstanceLocation, "/")
		msg := e.ErrorKind.LocalizedString(schemaPrinter)
		if _, ok := byPath[path]; !ok {
			paths = append(paths, path)
		}
		if !slices.Contains(byPath[path], msg) {
			byPath[path] = append(byPath[path], msg)
		}
	}
	walk(verr)
	sort.Strings(paths)
	var out []string
	for _, path := range paths {
		out = append(out, path+": "+joinReasons(byPath[path]))
	}
	if len(out) > maxSchemaErrors {
		out = append(out[:maxSchemaErrors], fmt.Sprintf("and %d more", len(out)-maxSchemaErrors))
	}
	return out
}

// joinReasons merges "value must be 'a'", "value must be 'b'" into one
// "value must be one of 'a', 'b'" and joins the rest with "or".
func joinReasons(msgs []string) string {
	const prefix = "value must be '"
	var consts, other []string
	for _, m := range msgs {
		if strings.HasPrefix(m, prefix) {
			consts = append(consts, strings.TrimPrefix(m, "value must be "))
		} else {
			other = append(other, m)
		}
	}
	sort.Strings(consts)
	switch len(consts) {
	case 0:
	case 1:
		other = append(other, "value must be "+consts[0])
	default:
		other = append(other, "value must be one of "+strings.Join(consts, ", "))
	}
	return strings.Join(other, " or ")
}
