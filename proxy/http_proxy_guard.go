package proxy

import (
	"io"
	"net/http"

	"github.com/acpscope/acpscope/internal/door"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
)

// refuse answers a request the guard turned away. On our endpoint the
// refusal is recorded as the upstream's are, as a status-only exchange
// of the connection the request names; its body was never read.
func (p *HTTPProxy) refuse(w http.ResponseWriter, r *http.Request, ref *door.Refusal) {
	body := "acpscope proxy: " + ref.Reason + "\n"
	ref.SetHeaders(w.Header())
	w.WriteHeader(ref.Status)
	io.WriteString(w, body)
	if r.URL.Path != p.path {
		return // other paths are not recorded
	}
	ex := p.newExchange(r)
	ex.status = ref.Status
	ex.rec.Frame(ex.conn, wire.DirAgent, tap.Now(), []byte(body), 0, ex.envelope(wire.StreamHTTPControl, w.Header()))
}

// forUpstream adjusts the headers of a request (or WebSocket handshake)
// the guard let through, on their way upstream.
//
// The upstream receives its own Host (rewrite sets it), so an Origin
// that is same-origin with the proxy becomes the upstream's origin: the
// page is the proxy's own, which the guard has checked, and the upstream
// (serve, or any server that checks Origin against Host) must see the
// pair a page of its own would send, or it refuses that page. Any other
// Origin (one allowed with --allow-origin) is passed on unchanged, for
// the upstream to judge.
//
// Authorization passes unchanged, so one token serves a chain connect →
// proxy → serve and the upstream sees what the client sent, unless an
// upstream token was given: then the upstream gets that one instead.
func (p *HTTPProxy) forUpstream(h http.Header, in *http.Request) {
	if origin := in.Header.Get("Origin"); origin != "" && door.SameOrigin(in, origin) {
		h.Set("Origin", p.upstream.Scheme+"://"+p.upstream.Host)
	}
	if p.upToken != "" {
		h.Set("Authorization", "Bearer "+p.upToken)
	}
}
