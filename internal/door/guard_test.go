package door

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuardHost is the Host allow-list: loopback names and addresses,
// the listen address, --allow-host, and on a wildcard listener this
// machine's addresses; nothing else, whatever the port.
func TestGuardHost(t *testing.T) {
	local := nonLoopbackAddr(t)
	tests := []struct {
		name   string
		opts   GuardOptions
		host   string
		admits bool
	}{
		{"127.0.0.1", GuardOptions{}, "127.0.0.1:8700", true},
		{"other loopback address", GuardOptions{}, "127.3.2.1:8700", true},
		{"localhost", GuardOptions{}, "localhost:8700", true},
		{"localhost in capitals with a final dot", GuardOptions{}, "LOCALHOST.:8700", true},
		{"::1", GuardOptions{}, "[::1]:8700", true},
		{"::1 spelled out", GuardOptions{}, "[0:0:0:0:0:0:0:1]:8700", true},
		{"no port", GuardOptions{}, "localhost", true},
		{"rebound name", GuardOptions{}, "evil.example:8700", false},
		{"name under localhost's", GuardOptions{}, "localhost.evil.example:8700", false},
		{"empty", GuardOptions{}, "", false},
		{"listen address", GuardOptions{Listen: []string{"192.0.2.10:8700"}}, "192.0.2.10:8700", true},
		{"listen address, other port", GuardOptions{Listen: []string{"192.0.2.10:8700"}}, "192.0.2.10:9000", true},
		{"listen name", GuardOptions{Listen: []string{"MyHost.lan:8700"}}, "myhost.lan:8700", true},
		{"not the listen address", GuardOptions{Listen: []string{"192.0.2.10:8700"}}, "192.0.2.11:8700", false},
		{"allow-host", GuardOptions{AllowHosts: []string{"myhost.lan"}}, "myhost.lan:8700", true},
		{"allow-host with its port", GuardOptions{AllowHosts: []string{"myhost.lan:8700"}}, "myhost.lan:8700", true},
		{"allow-host, another port", GuardOptions{AllowHosts: []string{"myhost.lan:8700"}}, "myhost.lan:9000", false},
		{"allow-host IPv6", GuardOptions{AllowHosts: []string{"[2001:db8::1]"}}, "[2001:db8::1]:8700", true},
		{"allow-host *", GuardOptions{AllowHosts: []string{"*"}}, "evil.example", true},
		{"wildcard: unspecified", GuardOptions{Listen: []string{"0.0.0.0:8700", "[::]:8700"}}, "[::]:8700", true},
		{"wildcard: a name", GuardOptions{Listen: []string{"0.0.0.0:8700"}}, "evil.example:8700", false},
		{"wildcard: not ours", GuardOptions{Listen: []string{"0.0.0.0:8700"}}, "203.0.113.7:8700", false},
		{"specific listener: another of our addresses", GuardOptions{Listen: []string{"127.0.0.1:8700"}}, "203.0.113.7:8700", false},
	}
	if local != "" {
		tests = append(tests, struct {
			name   string
			opts   GuardOptions
			host   string
			admits bool
		}{"wildcard: an interface address", GuardOptions{Listen: []string{"0.0.0.0:8700"}}, net.JoinHostPort(local, "8700"), true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Name = "serve"
			g, err := NewGuard(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "/acp", nil)
			r.Host = tt.host
			ref := g.Admit(r)
			if (ref == nil) != tt.admits {
				t.Fatalf("Host %q: refusal %+v, want admitted %v", tt.host, ref, tt.admits)
			}
			if ref != nil && (ref.Status != 403 || !strings.Contains(ref.Reason, "Host") || (tt.host != "" && !strings.Contains(ref.Reason, "start acpscope serve with --allow-host "))) {
				t.Errorf("refusal %+v does not name the Host and --allow-host", ref)
			}
		})
	}
}

// nonLoopbackAddr returns an address of this machine that is not
// loopback, or "" when it has none.
func nonLoopbackAddr(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestGuardOrigin is the Origin allow-list: none (not a browser), our
// own origin (scheme, host and port of the request), or --allow-origin.
func TestGuardOrigin(t *testing.T) {
	tests := []struct {
		name, host, origin string
		tls                bool
		allow              []string
		admits             bool
	}{
		{"no Origin", "127.0.0.1:8700", "", false, nil, true},
		{"same origin", "127.0.0.1:8700", "http://127.0.0.1:8700", false, nil, true},
		{"same origin, localhost", "localhost:8700", "http://LocalHost:8700", false, nil, true},
		{"same origin, default port", "localhost", "http://localhost:80", false, nil, true},
		{"same origin over TLS", "localhost:8700", "https://localhost:8700", true, nil, true},
		{"another port", "127.0.0.1:8700", "http://127.0.0.1:8701", false, nil, false},
		{"another scheme", "127.0.0.1:8700", "https://127.0.0.1:8700", false, nil, false},
		{"another loopback name", "127.0.0.1:8700", "http://localhost:8700", false, nil, false},
		{"another site", "127.0.0.1:8700", "http://evil.example:8700", false, nil, false},
		{"null", "127.0.0.1:8700", "null", false, nil, false},
		{"allowed", "127.0.0.1:8700", "http://app.example:3000", false, []string{"http://App.example:3000/"}, true},
		{"allowed is exact", "127.0.0.1:8700", "http://app.example:3001", false, []string{"http://app.example:3000"}, false},
		{"allow *", "127.0.0.1:8700", "http://evil.example", false, []string{"*"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewGuard(GuardOptions{Name: "proxy", AllowOrigins: tt.allow})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "/acp", nil)
			r.Host = tt.host
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			ref := g.Admit(r)
			if (ref == nil) != tt.admits {
				t.Fatalf("Origin %q to %s: refusal %+v, want admitted %v", tt.origin, tt.host, ref, tt.admits)
			}
			if ref != nil && (ref.Status != 403 || !strings.Contains(ref.Reason, "Origin \""+tt.origin+"\"") ||
				!strings.Contains(ref.Reason, "start acpscope proxy with --allow-origin "+tt.origin)) {
				t.Errorf("refusal %+v does not name the Origin and --allow-origin", ref)
			}
		})
	}
}

// TestGuardAuthorize checks the bearer token and that a preflight,
// which carries none, passes Check.
func TestGuardAuthorize(t *testing.T) {
	g, err := NewGuard(GuardOptions{Name: "serve", AuthToken: "s3cret-token"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method string
		hv           []string
		want         int // 0: admitted
	}{
		{"no header", "POST", nil, 401},
		{"wrong token", "POST", []string{"Authorization", "Bearer s3cret-tokeN"}, 401},
		{"prefix of the token", "POST", []string{"Authorization", "Bearer s3cret"}, 401},
		{"token and more", "POST", []string{"Authorization", "Bearer s3cret-token2"}, 401},
		{"another scheme", "POST", []string{"Authorization", "Basic s3cret-token"}, 401},
		{"no scheme", "POST", []string{"Authorization", "s3cret-token"}, 401},
		{"right token", "POST", []string{"Authorization", "Bearer s3cret-token"}, 0},
		{"scheme in lower case", "GET", []string{"Authorization", "bearer s3cret-token"}, 0},
		{"preflight", "OPTIONS", []string{"Origin", "http://127.0.0.1:8700", "Access-Control-Request-Method", "POST"}, 0},
		{"OPTIONS that is no preflight", "OPTIONS", nil, 401},
		{"preflight from another site", "OPTIONS", []string{"Origin", "http://evil.example", "Access-Control-Request-Method", "POST"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://127.0.0.1:8700/acp", nil)
			for i := 0; i+1 < len(tt.hv); i += 2 {
				r.Header.Set(tt.hv[i], tt.hv[i+1])
			}
			ref := g.Check(r)
			got := 0
			if ref != nil {
				got = ref.Status
			}
			if got != tt.want {
				t.Fatalf("status %d (%+v), want %d", got, ref, tt.want)
			}
			if got == 401 {
				h := http.Header{}
				ref.SetHeaders(h)
				if !strings.Contains(ref.Reason, "bearer token") || h.Get("Www-Authenticate") == "" {
					t.Errorf("401 without a reason or WWW-Authenticate: %+v %v", ref, h)
				}
			}
		})
	}
}

// TestGuardOptions checks that allow-list values that are not hosts or
// origins are refused with the flag and an example.
func TestGuardOptions(t *testing.T) {
	tests := []struct {
		opts GuardOptions
		want string
	}{
		{GuardOptions{AllowHosts: []string{"http://myhost.lan"}}, `--allow-host "http://myhost.lan" is not a host name`},
		{GuardOptions{AllowHosts: []string{""}}, `--allow-host "" is not a host name`},
		{GuardOptions{AllowOrigins: []string{"app.example"}}, `--allow-origin "app.example" is not an origin`},
		{GuardOptions{AllowOrigins: []string{"http://app.example/page"}}, `--allow-origin "http://app.example/page" is not an origin`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := NewGuard(tt.opts)
			if !errors.Is(err, ErrAllowList) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "e.g.") {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := NewGuard(GuardOptions{AllowHosts: []string{"*", "myhost.lan:8700", "::1"}, AllowOrigins: []string{"*", "http://localhost:3000/", "vscode-webview://abc"}}); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
}
