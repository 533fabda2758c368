//go:build !unix

package bench

import (
	"errors"
	"time"
)

func faultCost(int) (time.Duration, error) {
	return 0, errors.New("page-fault probe: not measured on this system")
}
