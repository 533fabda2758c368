package capture

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// TestCloseWhileTapping: a frame handed over while Close runs is either
// recorded or counted lost, never left in the queue unaccounted.
func TestCloseWhileTapping(t *testing.T) {
	for round := 0; round < 10; round++ {
		w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, Warn: func(string) {}})
		var sent atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(conn uint32) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					w.Frame(conn, wire.DirClient, 1, []byte(`{"jsonrpc":"2.0","method":"n"}`), 0, nil)
					sent.Add(1)
				}
			}(uint32(g))
		}
		for sent.Load() < 2000 {
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		lost := w.Stats().Loss.Messages
		r := openTest(t, w.Path())
		recorded := int64(len(readAll(t, r)))
		if recorded+lost != sent.Load() {
			t.Fatalf("round %d: %d frames sent, %d recorded + %d counted lost = %d", round, sent.Load(), recorded, lost, recorded+lost)
		}
	}
}
