package door

import (
	"errors"
	"net"
	"testing"
)

// TestListenErrors checks Listen's refusals: each is one line with no
// sentinel repeated at its end, and a bad address is refused before the
// non-loopback warning (nothing will listen there).
func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		addr     string
		sentinel error
		want     string
	}{
		{busy.Addr().String(), ErrAddrInUse, busy.Addr().String() + " is in use; pick another --listen port"},
		{"0.0.0.0:99999", ErrListenAddr, `--listen "0.0.0.0:99999": the port must be a number from 0 to 65535`},
		{"0.0.0.0:-1", ErrListenAddr, `--listen "0.0.0.0:-1": the port must be a number from 0 to 65535`},
		{"0.0.0.0", ErrListenAddr, `--listen "0.0.0.0" is not HOST:PORT, e.g. 127.0.0.1:8700`},
		{":x9", ErrListenAddr, `--listen "127.0.0.1:x9": the port must be a number from 0 to 65535`},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			var warned []string
			l, err := Listen(ListenOptions{Addr: tt.addr, Warn: func(s string) { warned = append(warned, s) }})
			if err == nil {
				l.Close()
				t.Fatal("listened")
			}
			if !errors.Is(err, tt.sentinel) || err.Error() != tt.want {
				t.Errorf("got %q, want %q (wrapping %v)", err, tt.want, tt.sentinel)
			}
			if tt.sentinel == ErrListenAddr && len(warned) > 0 {
				t.Errorf("warned %q before refusing the address", warned)
			}
			if err := CheckListenAddr(tt.addr); (err != nil) != (tt.sentinel == ErrListenAddr) {
				t.Errorf("CheckListenAddr: %v", err)
			}
		})
	}
}
