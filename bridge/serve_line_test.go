package bridge

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteLine(t *testing.T) {
	big := append(append([]byte(`{"data":"`), bytes.Repeat([]byte("x"), smallLine)...), `"}`...)
	tests := []struct {
		name, in, want string
	}{
		{"one line", `{"a":1}`, "{\"a\":1}\n"},
		{"pretty", "{\n  \"a\": [1, 2],\r\n  \"b\": \"x y\\\" \\n z\"\n}", "{\"a\":[1,2],\"b\":\"x y\\\" \\n z\"}\n"},
		{"escaped backslash before quote", "{\n\"a\": \"\\\\\", \"b\" : 1}", "{\"a\":\"\\\\\",\"b\":1}\n"},
		{"not json: as it is", "not\njson", "not\njson\n"},
		{"big", string(big), string(big) + "\n"},
		{"big and pretty", "{\n" + string(big[1:]), string(big) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := writeLine(&out, []byte(tt.in)); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %.80q…, want %.80q…", out.String(), tt.want)
			}
		})
	}
}

// FuzzWriteCompact checks the streaming compactor against json.Compact.
func FuzzWriteCompact(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2]}`, "{\n \"s\": \"a \\\" b\\\\\"\n}", `[ "\u00e9" , null , true ]`, ` 1 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if !json.Valid(msg) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, msg); err != nil {
			t.Fatal(err)
		}
		want.WriteByte('\n')
		var got bytes.Buffer
		if err := writeCompact(&got, msg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("writeCompact(%q) = %q, want %q", msg, got.Bytes(), want.Bytes())
		}
	})
}
