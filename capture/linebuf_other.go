//go:build !linux

package capture

// lineBuffers is empty where huge pages cannot be asked for: the framer
// assembles lines in ordinary memory.
type lineBuffers struct{}

func newLineBuffers() lineBuffers { return lineBuffers{} }

func (lb *lineBuffers) allocFunc() func(int) []byte { return nil }

func (lb *lineBuffers) take([]byte) []byte { return nil }

func (lb *lineBuffers) giveBack([]byte) {}

func (lb *lineBuffers) drop() {}

func adviseHugePages([]byte) {}
