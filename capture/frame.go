package capture

import "github.com/acpscope/acpscope/wire"

// hasCR reports a line that ended in "\r\n" (the "\r" stays in the bytes).
func hasCR(line []byte) bool {
	return len(line) > 0 && line[len(line)-1] == '\r'
}

// crlfFlag is FlagCRLF for lines ending in "\r".
func crlfFlag(line []byte) wire.Flags {
	if hasCR(line) {
		return wire.FlagCRLF
	}
	return 0
}
