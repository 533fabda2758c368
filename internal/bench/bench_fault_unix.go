//go:build unix

package bench

import (
	"fmt"
	"syscall"
	"time"
)

// faultCost maps n bytes of fresh anonymous memory (never the Go heap,
// which may hand back pages already resident) and times one write to
// each 4 KiB page.
func faultCost(n int) (time.Duration, error) {
	const page = 4 << 10
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0, fmt.Errorf("page-fault probe: %w", err)
	}
	defer syscall.Munmap(m)
	start := time.Now()
	for i := 0; i < n; i += page {
		m[i] = 1
	}
	return time.Since(start) / time.Duration(n/page), nil
}
