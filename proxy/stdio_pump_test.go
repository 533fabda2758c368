package proxy

import (
	"bytes"
	"io"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
)

// chunkReader returns data in the given chunk sizes (cycled), so a pump
// sees reads that split lines anywhere.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
	reads int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = max(1, r.sizes[r.i%len(r.sizes)])
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	r.reads++
	return n, nil
}

// countingWriter keeps what it was given and how many calls it took.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestPumpOneWritePerRead(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		sizes []int
	}{
		{"one byte reads", []byte("{\"a\":1}\n{\"b\":2}\n"), []int{1}},
		{"reads across lines", bytes.Repeat([]byte("line\r\n\n\xff"), 1000), []int{7, 1, 300, 4096}},
		{"one big read", bigLine(1 << 20), []int{1 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &chunkReader{data: append([]byte(nil), tt.data...), sizes: tt.sizes}
			dst := &countingWriter{}
			rec := newTestRecorder()
			p := newPump(src, dst, rec, 0, capture.StreamAgent, DefaultBufferSize)
			p.run(nil)
			if !bytes.Equal(dst.Bytes(), tt.data) {
				t.Errorf("forwarded %d bytes, want %d", dst.Len(), len(tt.data))
			}
			if dst.writes != src.reads {
				t.Errorf("%d writes for %d reads, want one each", dst.writes, src.reads)
			}
			rec.check(t, capture.StreamAgent, tt.data)
		})
	}
}

// TestPumpForwardAllocatesNothing: the forwarding path allocates nothing
// per chunk, whatever the chunk holds.
func TestPumpForwardAllocatesNothing(t *testing.T) {
	p := newPump(nil, io.Discard, tap.Discard{}, 0, capture.StreamClient, DefaultBufferSize)
	chunk := bytes.Repeat([]byte(`{"jsonrpc":"2.0","method":"x"}`+"\n"), 100)
	if n := testing.AllocsPerRun(1000, func() { p.forward(chunk) }); n != 0 {
		t.Errorf("forward allocates %v times per chunk, want 0", n)
	}
}

// FuzzPump: whatever the bytes and however reads split them, the pump
// forwards and records exactly them.
func FuzzPump(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\r\n\n[1,2]\n\xff\xfe"), []byte{1, 5, 3})
	f.Add([]byte{}, []byte{})
	f.Add(bytes.Repeat([]byte{0}, 5000), []byte{255, 1})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		cuts := make([]int, len(sizes))
		for i, s := range sizes {
			cuts[i] = int(s)
		}
		src := &chunkReader{data: append([]byte(nil), data...), sizes: cuts}
		dst := &countingWriter{}
		rec := newTestRecorder()
		p := newPump(src, dst, rec, 0, capture.StreamClient, 64)
		p.run(nil)
		if !bytes.Equal(dst.Bytes(), data) {
			t.Fatalf("forwarded %q, want %q", dst.Bytes(), data)
		}
		rec.check(t, capture.StreamClient, data)
	})
}
