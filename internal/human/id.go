package human

import "unicode/utf8"

// ShortID keeps the distinctive ends of a long identifier such as a
// sessionId (agents use common prefixes, dates or "sess_", and unique
// tails): the first 5 and last 6 characters around an ellipsis, 12 wide.
// Shorter ones are kept whole.
func ShortID(s string) string {
	const head, tail = 5, 6
	if utf8.RuneCountInString(s) <= head+1+tail {
		return s
	}
	r := []rune(s)
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
