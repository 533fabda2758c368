package bench

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// medianSyncWriteRate is the median of three probes: a virtual disk's
// synced rate swings widely from one second to the next.
func medianSyncWriteRate(dir string, n int) (float64, error) {
	var rates []float64
	for range 3 {
		r, err := syncWriteRate(dir, n)
		if err != nil {
			return 0, err
		}
		rates = append(rates, r)
	}
	slices.Sort(rates)
	return rates[1], nil
}

// syncWriteRate measures dir's synced write rate in MB/s the way
// dd bs=1M conv=fsync does: n bytes written in 1 MiB blocks to a new
// file, then one fsync, timed together. Capture commits with fsync into
// the same directory, so this is the disk's bound on what it can record.
func syncWriteRate(dir string, n int) (float64, error) {
	f, err := os.CreateTemp(dir, "sync-probe-")
	if err != nil {
		return 0, fmt.Errorf("synced write probe: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i) // not all zeros, in case the file system compresses
	}
	start := time.Now()
	for done := 0; done < n; done += len(block) {
		if _, err := f.Write(block[:min(len(block), n-done)]); err != nil {
			return 0, fmt.Errorf("synced write probe: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("synced write probe: %w", err)
	}
	return float64(n) / 1e6 / time.Since(start).Seconds(), nil
}
