package inspector

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite KEYS.md from the key bindings")

// keysMarkdown renders the bindings help shows as the KEYS.md table.
func keysMarkdown() string {
	var b strings.Builder
	b.WriteString("# acpscope inspect: keys\n\n")
	b.WriteString("Generated from `bindings` in help.go (`go test ./inspector -run TestKeysDoc -update`); `?` in the inspector shows the same list.\n")
	for _, g := range bindings {
		fmt.Fprintf(&b, "\n## %s\n\n| keys | what they do |\n| --- | --- |\n", g.group)
		for _, k := range g.keys {
			keys := strings.ReplaceAll(k.keys, "|", `\|`)
			fmt.Fprintf(&b, "| `%s` | %s |\n", keys, strings.ReplaceAll(k.what, "|", `\|`))
		}
	}
	return b.String()
}

func TestKeysDoc(t *testing.T) {
	want := keysMarkdown()
	if *update {
		if err := os.WriteFile("KEYS.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("KEYS.md")
	if err != nil {
		t.Fatalf("reading KEYS.md: %v (run go test ./inspector -run TestKeysDoc -update)", err)
	}
	if string(got) != want {
		t.Fatal("KEYS.md is out of date with the key bindings; run go test ./inspector -run TestKeysDoc -update")
	}
}
