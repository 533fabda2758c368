package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// Before each timed echo the machine settles: a huge line leaves work
// behind it after its echo has returned (the tee pipeline's logger still
// writing two copies of it, capture committing its own), and on two
// cores that work landed in the next setup's turn, which the ratios must
// not show. settle waits until the CPUs have been mostly idle for one
// window, or gives up after settleMax on a machine that never is.
const (
	settleWindow = 50 * time.Millisecond
	settleIdle   = 0.8 // share of CPU time idle in the window
	settleMax    = 3 * time.Second
)

func settle() {
	deadline := time.Now().Add(settleMax)
	prevIdle, prevTotal, ok := cpuTimes()
	if !ok {
		time.Sleep(rttSettle) // no /proc/stat: a fixed pause
		return
	}
	for time.Now().Before(deadline) {
		time.Sleep(settleWindow)
		idle, total, ok := cpuTimes()
		if !ok {
			return
		}
		if total > prevTotal && float64(idle-prevIdle)/float64(total-prevTotal) >= settleIdle {
			return
		}
		prevIdle, prevTotal = idle, total
	}
}

// busyDuring runs f and returns the share of all CPUs' time that was
// busy meanwhile (any process, the bench's own reading included), or -1
// where /proc/stat cannot tell.
func busyDuring(f func() error) (float64, error) {
	idle0, total0, ok0 := cpuTimes()
	err := f()
	idle1, total1, ok1 := cpuTimes()
	if !ok0 || !ok1 || total1 <= total0 {
		return -1, err
	}
	return 1 - float64(idle1-idle0)/float64(total1-total0), err
}

// cpuTimes reads the idle and total jiffies of all CPUs from /proc/stat.
func cpuTimes() (idle, total uint64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range fields[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 3 || i == 4 { // idle and iowait
			idle += n
		}
	}
	return idle, total, true
}
