package door

import (
	"errors"
	"strings"
	"testing"
)

func TestListen(t *testing.T) {
	l, err := Listen(ListenOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = Listen(ListenOptions{Addr: addr})
	if !errors.Is(err, ErrAddrInUse) || !strings.HasPrefix(err.Error(), addr+" is in use; pick another --listen port") {
		t.Fatalf("second listener: %v", err)
	}
	var warned []string
	l2, err := Listen(ListenOptions{Addr: "0.0.0.0:0", Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	l2.Close()
	if len(warned) != 1 || !strings.Contains(warned[0], "not a loopback address") {
		t.Fatalf("non-loopback listen warned %q", warned)
	}
	l3, err := Listen(ListenOptions{Addr: ":0", Warn: func(s string) { t.Errorf("warned for the default host: %s", s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if !IsLoopback(l3.Addr().String()) {
		t.Fatalf("an empty host listened on %s, want loopback", l3.Addr())
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8700": true, "[::1]:8700": true, "localhost:1": true,
		"0.0.0.0:8700": false, "192.168.1.2:80": false, "example.com:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
