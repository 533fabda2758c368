package capture

import "sync"

// textCache remembers the short texts the scanners found no secret in. A
// capture says the same small strings in every message ("2.0", method
// names, session ids, "text", key names), and scanning each of them again
// was most of the time an export of a million messages took.
type textCache struct {
	mu    sync.Mutex
	clean [2]map[string]struct{} // [0]: plain text, [1]: inside a JSON string
}

// Only texts up to cacheTextLen bytes are remembered, and at most
// cacheEntries of them: then the cache starts again.
const (
	cacheTextLen = 128
	cacheEntries = 1 << 14
)

func jsonIndex(json bool) int {
	if json {
		return 1
	}
	return 0
}

// isClean reports whether b was found clean before.
func (c *textCache) isClean(b []byte, json bool) bool {
	if len(b) > cacheTextLen {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.clean[jsonIndex(json)][string(b)]
	return ok
}

// addClean remembers that b holds no secret.
func (c *textCache) addClean(b []byte, json bool) {
	if len(b) > cacheTextLen {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.clean[jsonIndex(json)]
	if m == nil || len(m) >= cacheEntries {
		m = make(map[string]struct{})
		c.clean[jsonIndex(json)] = m
	}
	m[string(b)] = struct{}{}
}

// nameCache remembers what credentialName said of each name it was asked
// about; a message's keys are the same few dozen names again and again.
var nameCache struct {
	mu sync.Mutex
	m  map[string]bool
}

// credentialNameCached is credentialName, remembered.
func credentialNameCached(name string) bool {
	nameCache.mu.Lock()
	v, ok := nameCache.m[name]
	nameCache.mu.Unlock()
	if ok {
		return v
	}
	v = credentialName(name)
	if len(name) <= cacheTextLen {
		nameCache.mu.Lock()
		if nameCache.m == nil || len(nameCache.m) >= cacheEntries {
			nameCache.m = make(map[string]bool)
		}
		nameCache.m[name] = v
		nameCache.mu.Unlock()
	}
	return v
}
