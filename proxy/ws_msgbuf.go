package proxy

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// msgBuf is the buffer a relay leg gathers one WebSocket message in. It
// comes from a pool by size class; one past keptMessage is lent to the
// capture with the message (tap.Borrower) and goes back to its pool when
// the capture returns it. A steady stream of big messages reuses the
// same memory, where a buffer of its own for each message of a megabyte
// had the runtime zero fresh memory, twice over as it doubled, on the
// forwarding path.
type msgBuf struct {
	b     []byte
	class int           // index in msgPools; -1: memory of no class, not reused
	held  *atomic.Int64 // the proxy's count of buffers out of their pools, or nil
}

// Size classes are the powers of two from 4 KiB to 16 MiB. A larger
// message gets memory of its own, which the collector takes back: kept
// for reuse it would hold that much for the rest of the run.
const (
	minMsgShift = 12
	maxMsgShift = 24
)

var msgPools [maxMsgShift - minMsgShift + 1]sync.Pool

// newMsgBuf returns an empty buffer with room for n bytes, counted in
// held unless it is nil.
func newMsgBuf(n int, held *atomic.Int64) *msgBuf {
	m := takeMsgBuf(n)
	if m.held = held; held != nil {
		held.Add(1)
	}
	return m
}

func takeMsgBuf(n int) *msgBuf {
	class, size := msgClass(n)
	if class < 0 {
		return &msgBuf{b: make([]byte, 0, n), class: -1}
	}
	if m, ok := msgPools[class].Get().(*msgBuf); ok {
		m.b = m.b[:0]
		return m
	}
	return &msgBuf{b: make([]byte, 0, size), class: class}
}

// msgClassWithin is the most room a buffer for at most n bytes gives:
// the largest class's size within n (the smallest class's, for less),
// or n past the largest class.
func msgClassWithin(n int) int {
	if n > 1<<maxMsgShift {
		return n
	}
	return 1 << max(minMsgShift, bits.Len(uint(n))-1)
}

// msgClass is the size class of a buffer for n bytes: its index in
// msgPools and the room it gives, the smallest power of two ≥ n; past
// the largest class, -1 and n.
func msgClass(n int) (class, size int) {
	shift := minMsgShift
	if n > 1<<minMsgShift {
		shift = bits.Len(uint(n - 1))
	}
	if shift > maxMsgShift {
		return -1, n
	}
	return shift - minMsgShift, 1 << shift
}

// Return puts the buffer back in its pool; nothing may use it after.
func (m *msgBuf) Return() {
	m.giveAway()
	if m.class >= 0 {
		msgPools[m.class].Put(m)
	}
}

// giveAway lets the buffer go for good, to a recorder that keeps it.
func (m *msgBuf) giveAway() {
	if m != nil && m.held != nil {
		m.held.Add(-1)
	}
}
