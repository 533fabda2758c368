package protocol

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRulesDoc keeps RULES.md, the rule list the README links to, in step
// with Rules(); run with -update after changing a rule.
func TestRulesDoc(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# acpscope lint rules\n\nGenerated from `protocol.Rules()` (`go test ./protocol -run TestRulesDoc -update`); `acpscope lint --rules` prints the same list.\n\n")
	b.WriteString("| rule | severity | what it finds | reference |\n| --- | --- | --- | --- |\n")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.ID, r.Severity, strings.ReplaceAll(r.Description, "|", `\|`), r.Ref)
	}
	if *update {
		if err := os.WriteFile("RULES.md", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("RULES.md")
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Error("RULES.md is out of date; run go test ./protocol -run TestRulesDoc -update")
	}
}
