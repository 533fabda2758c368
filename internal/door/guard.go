package door

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// GuardOptions say who may use a listener of serve or proxy.
type GuardOptions struct {
	// Name is the command the listener belongs to ("serve", "proxy"),
	// for the flags a refusal names.
	Name string
	// Listen are the listener's addresses, as given to --listen and as
	// bound: a Host naming one of them (any port) names us. A wildcard
	// (0.0.0.0, ::) adds the machine's own interface addresses.
	Listen []string
	// AllowHosts are further Host values (--allow-host): NAME, or
	// NAME:PORT to allow that port only; "*" allows any Host.
	AllowHosts []string
	// AllowOrigins are browser origins allowed besides pages of our own
	// origin (--allow-origin); "*" allows any.
	AllowOrigins []string
	// AuthToken, when set, must arrive as "Authorization: Bearer TOKEN".
	AuthToken string
}

// Guard is the door of a listener. A loopback port is open to every
// local user and process, and to any web page through DNS rebinding (a
// name the page controls, resolved to 127.0.0.1) or a plain cross-site
// request. Admit stops the web pages: the Host must name this server, so
// a rebound name is refused, and a browser's Origin must be this server's
// own, so another site's page is refused. Authorize stops everyone
// without the token. Both run before an agent is started or a byte is
// forwarded. A Guard is safe for concurrent use.
type Guard struct {
	name      string
	hosts     []hostPattern
	anyHost   bool
	wildcard  bool // listening on every interface
	origins   []string
	anyOrigin bool
	token     [sha256.Size]byte // of AuthToken, compared in constant time
	hasToken  bool
}

// Refusal is a request the guard turned away: the status to answer and
// one line saying which header was wrong and which flag allows it.
type Refusal struct {
	Status int
	Reason string
}

// hostPattern is one allowed Host: a name or address, at one port or
// (port "") at any.
type hostPattern struct{ host, port string }

// NewGuard checks the allow-lists and returns the guard.
func NewGuard(opts GuardOptions) (*Guard, error) {
	g := &Guard{name: opts.Name}
	if opts.AuthToken != "" {
		g.token, g.hasToken = sha256.Sum256([]byte(opts.AuthToken)), true
	}
	for _, addr := range opts.Listen {
		host, _ := splitHost(addr)
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			g.wildcard = true
		}
		if host != "" {
			g.hosts = append(g.hosts, hostPattern{host: host})
		}
	}
	for _, h := range opts.AllowHosts {
		if h == "*" {
			g.anyHost = true
			continue
		}
		if strings.ContainsAny(h, "/@ ") || h == "" {
			return nil, fmt.Errorf("%w: --allow-host %q is not a host name: give NAME or NAME:PORT, e.g. --allow-host myhost.lan", ErrAllowList, h)
		}
		host, port := splitHost(h)
		g.hosts = append(g.hosts, hostPattern{host, port})
	}
	for _, o := range opts.AllowOrigins {
		if o == "*" {
			g.anyOrigin = true
			continue
		}
		o = strings.TrimSuffix(o, "/")
		if u, err := url.Parse(o); o != "null" && (err != nil || u.Scheme == "" || u.Host == "" || u.Path != "") {
			return nil, fmt.Errorf("%w: --allow-origin %q is not an origin: give SCHEME://HOST[:PORT], e.g. --allow-origin http://localhost:3000", ErrAllowList, o)
		}
		g.origins = append(g.origins, o)
	}
	return g, nil
}

// Admit checks Host and Origin: nil when the request may go on, else a
// 403 that names the header and the flag that would allow it.
func (g *Guard) Admit(r *http.Request) *Refusal {
	if !g.hostAllowed(r) {
		host, _ := splitHost(r.Host)
		if host == "" {
			return &Refusal{http.StatusForbidden, "refused: the request has no Host header; send one naming this server"}
		}
		return &Refusal{http.StatusForbidden, fmt.Sprintf(
			"refused: Host %q is neither this server's address nor a loopback name (a web page using DNS rebinding sends such Hosts); if that name is yours, start acpscope %s with --allow-host %s",
			r.Host, g.name, host)}
	}
	if origin := r.Header.Get("Origin"); !g.originAllowed(r, origin) {
		return &Refusal{http.StatusForbidden, fmt.Sprintf(
			"refused: Origin %q is not this server's own origin (a page from another site); to let it in, start acpscope %s with --allow-origin %s",
			origin, g.name, origin)}
	}
	return nil
}

// Authorize checks the bearer token: nil when it is right or none is
// required, else a 401. Both sides are hashed first, so the comparison
// takes the same time whatever the token's length or content.
func (g *Guard) Authorize(r *http.Request) *Refusal {
	if !g.hasToken {
		return nil
	}
	got, ok := bearer(r.Header.Get("Authorization"))
	sum := sha256.Sum256([]byte(got))
	if ok && subtle.ConstantTimeCompare(sum[:], g.token[:]) == 1 {
		return nil
	}
	return &Refusal{http.StatusUnauthorized, fmt.Sprintf(
		"refused: missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token acpscope %s was started with",
		g.name)}
}

// Check is Admit then Authorize, except that a CORS preflight, which a
// browser sends without credentials, needs no token.
func (g *Guard) Check(r *http.Request) *Refusal {
	if ref := g.Admit(r); ref != nil || isPreflight(r) {
		return ref
	}
	return g.Authorize(r)
}

// SetHeaders adds the headers a refusal's answer carries.
func (ref *Refusal) SetHeaders(h http.Header) {
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if ref.Status == http.StatusUnauthorized {
		h.Set("Www-Authenticate", `Bearer realm="acpscope"`)
	}
}

// bearer takes the credentials of a Bearer Authorization header; the
// scheme is case-insensitive (RFC 9110, section 11.1).
func bearer(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	return strings.TrimSpace(h[len(scheme):]), true
}

func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}
