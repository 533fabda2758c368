//go:build !linux

package capture

// lineBuffers is empty where huge pages cannot be asked for: the framer
// assembles lines in ordinary memory, long ones too (startLong declines).
type lineBuffers struct{}

func (lb *lineBuffers) startLong(int) []byte { return nil }

func (lb *lineBuffers) growLong([]byte, int) []byte { return nil }

func newLineBuffers() lineBuffers { return lineBuffers{} }

func (lb *lineBuffers) allocFunc() func(int) []byte { return nil }

func (lb *lineBuffers) take([]byte) []byte { return nil }

func (lb *lineBuffers) giveBack([]byte) {}

func (lb *lineBuffers) drop() {}

func adviseHugePages([]byte) {}
