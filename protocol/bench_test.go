package protocol

import (
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// BenchmarkAnalyses measures lint and the transcript on the goose fixture
// (571 messages, 1 MB) against a baseline of classifying every frame,
// the least any analysis must do.
func BenchmarkAnalyses(b *testing.B) {
	msgs := loadDevtools(b, "goose-1.37.0.json")
	var size int64
	for _, m := range msgs {
		size += int64(len(m.Body))
	}
	b.Run("baseline-classify", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, m := range msgs {
				wire.Classify(m.Body)
			}
		}
	})
	b.Run("lint", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			Lint(msgs, LintOptions{Finished: true})
		}
	})
	b.Run("transcript", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			BuildTranscript(msgs)
		}
	})
}
