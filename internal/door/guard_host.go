package door

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostAllowed reports whether the request's Host names this server: a
// loopback name or address, a listen address, the address the connection
// arrived on, an --allow-host, or on a wildcard listener any address of
// this machine. Ports are not compared (except for an --allow-host that
// gives one): a port forward may change it, and rebinding is about the
// name.
func (g *Guard) hostAllowed(r *http.Request) bool {
	if g.anyHost {
		return true
	}
	host, port := splitHost(r.Host)
	if host == "" {
		return false
	}
	if isLoopbackHost(host) {
		return true
	}
	for _, p := range g.hosts {
		if p.host == host && (p.port == "" || p.port == port) {
			return true
		}
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false // a name we were not told about
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok && a.IP.Equal(ip) {
		return true
	}
	return g.wildcard && isInterfaceAddr(ip)
}

// originAllowed reports whether a browser's Origin may use us: none at
// all (editors, curl, connect), one allowed by name, or our own.
func (g *Guard) originAllowed(r *http.Request, origin string) bool {
	if origin == "" || g.anyOrigin {
		return true
	}
	for _, o := range g.origins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return SameOrigin(r, origin)
}

// SameOrigin reports whether origin is the origin r was sent to: our
// scheme, and the host and port of its Host (which Admit checks first),
// default ports made explicit. "null" (sandboxed frames, files) is never
// anyone's own.
func SameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	oh, op := splitHost(u.Host)
	rh, rp := splitHost(r.Host)
	return oh != "" && oh == rh && portOr(op, scheme) == portOr(rp, scheme)
}

func portOr(port, scheme string) string {
	switch {
	case port != "":
		return port
	case scheme == "https":
		return "443"
	}
	return "80"
}

// splitHost splits HOST[:PORT] (IPv6 in brackets or bare) into a
// normalized host (lower case, no final dot, IP addresses in canonical
// form) and the port, "" when none.
func splitHost(hostport string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip := net.ParseIP(h); ip != nil {
		h = ip.String()
	}
	return h, p
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isInterfaceAddr reports whether ip is an address of this machine. It
// asks the system each time: addresses come and go (DHCP, VPNs), and it
// only runs for a Host that is an address no cheaper rule allowed.
func isInterfaceAddr(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
