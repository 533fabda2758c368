package wsframe

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Opcode is a frame's type (RFC 6455 §5.2).
type Opcode byte

// The opcodes RFC 6455 defines; the others are reserved.
const (
	Continuation Opcode = 0x0
	Text         Opcode = 0x1
	Binary       Opcode = 0x2
	Close        Opcode = 0x8
	Ping         Opcode = 0x9
	Pong         Opcode = 0xa
)

// IsControl reports a close, ping, pong or reserved control opcode: a
// frame that may come between the fragments of a message.
func (o Opcode) IsControl() bool { return o&0x8 != 0 }

// MaxHeaderLen is the longest frame header: two bytes, an eight-byte
// length and a four-byte masking key.
const MaxHeaderLen = 14

// NoStatus is the code a close without a payload stands for (RFC 6455
// §7.1.5); it is never sent.
const NoStatus = 1005

// ErrBadLength is a 64-bit payload length with its top bit set, which
// RFC 6455 §5.2 forbids; nothing after such a header can be framed.
var ErrBadLength = errors.New("websocket frame length has its top bit set")

// Header is what a frame's header says.
type Header struct {
	Fin bool
	// Compressed is RSV1: under permessage-deflate, the first frame of a
	// compressed message has it.
	Compressed bool
	// Reserved holds RSV2 and RSV3, which no extension we know uses.
	Reserved byte
	Op       Opcode
	Masked   bool
	Key      [4]byte
	Len      int64 // of the payload
}

// ParseHeader reads the header at the start of b. It returns the header
// and how many bytes it took, or n == 0 when b ends before the header
// does.
func ParseHeader(b []byte) (h Header, n int, err error) {
	if len(b) < 2 {
		return h, 0, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.Compressed = b[0]&0x40 != 0
	h.Reserved = b[0] & 0x30 >> 4
	h.Op = Opcode(b[0] & 0x0f)
	h.Masked = b[1]&0x80 != 0
	n = headerLen(b[1])
	if len(b) < n {
		return Header{}, 0, nil
	}
	switch l := b[1] & 0x7f; l {
	case 126:
		h.Len = int64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		u := binary.BigEndian.Uint64(b[2:])
		if u > math.MaxInt64 {
			return Header{}, 0, fmt.Errorf("%w (%#x)", ErrBadLength, u)
		}
		h.Len = int64(u)
	default:
		h.Len = int64(l)
	}
	if h.Masked {
		copy(h.Key[:], b[n-4:n])
	}
	return h, n, nil
}

// headerLen is the length of a header whose second byte is b1.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4
	}
	return n
}

// PeekHeader parses the frame header at the front of r without taking
// it, so the relay can forward it with the payload in one write; it
// returns the header and its length. An end of input before the first
// byte is io.EOF; within the header, io.ErrUnexpectedEOF. r's buffer
// must hold at least MaxHeaderLen bytes.
func PeekHeader(r *bufio.Reader) (Header, int, error) {
	b, err := r.Peek(2)
	if err != nil {
		return Header{}, 0, cutShort(err, len(b) > 0)
	}
	n := headerLen(b[1])
	if b, err = r.Peek(n); err != nil {
		return Header{}, 0, cutShort(err, true)
	}
	h, _, err := ParseHeader(b)
	return h, n, err
}

// cutShort turns an end of input within a header into
// io.ErrUnexpectedEOF.
func cutShort(err error, started bool) error {
	if started && errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Unmask applies key to b in place, b being the payload from byte pos
// on, and returns the position after b. Masking and unmasking are the
// same operation.
func Unmask(b []byte, key [4]byte, pos int64) int64 {
	k := key
	if s := int(pos & 3); s != 0 { // rotate the key so k[0] applies to b[0]
		k = [4]byte{key[s], key[(s+1)&3], key[(s+2)&3], key[(s+3)&3]}
	}
	k32 := binary.LittleEndian.Uint32(k[:])
	k64 := uint64(k32) | uint64(k32)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k64)
	}
	for ; i < len(b); i++ {
		b[i] ^= k[i&3]
	}
	return pos + int64(len(b))
}

// ParseClose reads a close frame's payload: its code and reason, or
// NoStatus and "" for an empty one. A one-byte payload, which RFC 6455
// forbids, reads as NoStatus with the byte as the reason.
func ParseClose(p []byte) (code int, reason string) {
	if len(p) < 2 {
		return NoStatus, string(p)
	}
	return int(binary.BigEndian.Uint16(p)), string(p[2:])
}

// MaxControlPayload is the most a control frame (close, ping, pong)
// carries (RFC 6455 §5.5).
const MaxControlPayload = 125

// MaxCloseReason is the longest reason a close frame holds: two bytes of
// its payload are the code.
const MaxCloseReason = MaxControlPayload - 2

// AppendClose appends a close frame with code and reason (cut to
// MaxCloseReason bytes) to dst, masked with key when mask is set, as a
// client's frames must be.
func AppendClose(dst []byte, code int, reason string, mask bool, key [4]byte) []byte {
	if len(reason) > MaxCloseReason {
		reason = reason[:MaxCloseReason]
	}
	size := 2 + len(reason)
	b1 := byte(size)
	if mask {
		b1 |= 0x80
	}
	dst = append(dst, 0x80|byte(Close), b1)
	if mask {
		dst = append(dst, key[:]...)
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	dst = append(dst, reason...)
	if mask {
		Unmask(dst[start:], key, 0)
	}
	return dst
}
