package replay

import (
	"io"

	"github.com/acpscope/acpscope/capture"
)

// ExportMermaid draws one session of src (opts.Session) as a sequence
// diagram, the export for pasting a conversation into an issue. Labels
// carry methods and result summaries only; the bodies are redacted all
// the same, unless opts.NoRedact, so that no secret can reach a label.
func ExportMermaid(src capture.Source, w io.Writer, opts capture.ExportOptions) error {
	msgs, err := Load(src, opts.Session)
	if err != nil {
		return err
	}
	if !opts.NoRedact {
		red, err := capture.NewRedactor(opts.Redact)
		if err != nil {
			return err
		}
		for i := range msgs {
			msgs[i].Body, _ = red.Message(msgs[i].Method, msgs[i].Body)
		}
	}
	return WriteMermaid(w, msgs)
}
