package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/acpscope/acpscope/wire"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Reading message members: the builder looks up the few members it needs
// in the exact bytes (wire.Value walks without decoding), so a tool call
// carrying megabytes of output costs a scan, not an unmarshal.

// at returns the exact bytes at the path of object keys, nil when absent.
func at(doc []byte, keys ...string) []byte {
	v := bytes.TrimSpace(doc)
	for _, k := range keys {
		if len(v) == 0 || v[0] != '{' {
			return nil
		}
		v = wire.Value(v, k)
	}
	return v
}

// strAt returns the string at the path, "" when absent or not a string.
func strAt(doc []byte, keys ...string) string {
	return strOf(at(doc, keys...))
}

// strOf decodes a JSON string literal; "" for anything else.
func strOf(v []byte) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// intAt returns the integer at the path.
func intAt(doc []byte, keys ...string) (int64, bool) {
	v := at(doc, keys...)
	if len(v) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil {
			return 0, false
		}
		return int64(f), true
	}
	return n, true
}

// floatAt returns the number at the path.
func floatAt(doc []byte, keys ...string) (float64, bool) {
	v := at(doc, keys...)
	if len(v) == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// each calls fn with every element of the array at the path.
func each(doc []byte, fn func(el []byte), keys ...string) {
	v := at(doc, keys...)
	if len(v) == 0 || v[0] != '[' {
		return
	}
	_ = wire.Walk(v, func(path []string, start, end int) bool {
		if len(path) == 1 {
			fn(v[start:end])
			return false
		}
		return len(path) == 0
	})
}

// count returns the length of the array at the path (0 when absent).
func count(doc []byte, keys ...string) int {
	n := 0
	each(doc, func([]byte) { n++ }, keys...)
	return n
}

// idText is a JSON-RPC id as rpc.jsonrpc.request_id wants it: a string
// id without its quotes, a number as written.
func idText(id []byte) string {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return s
		}
	}
	return string(id)
}

// remoteParent reads W3C trace context from params._meta (ACP reserves
// traceparent and tracestate there): the span context the message's
// sender placed it in, if valid.
func remoteParent(params []byte) (trace.SpanContext, bool) {
	meta := at(params, "_meta")
	tp := strAt(meta, "traceparent")
	if tp == "" {
		return trace.SpanContext{}, false
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts := strAt(meta, "tracestate"); ts != "" {
		carrier["tracestate"] = ts
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	return sc, sc.IsValid()
}
