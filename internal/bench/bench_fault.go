package bench

import (
	"slices"
	"time"
)

// faultProbeBytes is how much fresh memory the page-fault probe touches:
// as much as capture's queue holds, and the tap's copies fill when
// capture falls behind.
const faultProbeBytes = 64 << 20

// medianFaultCost is the median of three probes of what the kernel takes
// to fault in one fresh 4 KiB page. Capture pays it for every page of
// memory it takes fresh (a commit's page buffers, a huge line assembled,
// the tap's copies beyond its recycled buffers). It was 13-16 µs on a
// machine where the targets met on the same kind of machine before were
// missed by the same build, so a report needs it beside the ratios.
func medianFaultCost() (time.Duration, error) {
	var costs []time.Duration
	for range 3 {
		c, err := faultCost(faultProbeBytes)
		if err != nil {
			return 0, err
		}
		costs = append(costs, c)
	}
	slices.Sort(costs)
	return costs[1], nil
}
