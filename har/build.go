package har

import (
	"encoding/base64"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// exchange is one HTTP exchange being put back together.
type exchange struct {
	e          *entry
	conn       uint32
	start      int64 // unix ns: the request
	first, end int64 // unix ns: the first and last frame of the response
	reqSeq     uint64
	session    string
	sse        bool // the POST's response is an SSE stream
	text       strings.Builder
}

// streamKey names a GET stream: its connection and, for a session's
// stream, the session.
type streamKey struct {
	conn    uint32
	session string
}

// assembler puts a capture's frames back into HTTP exchanges.
type assembler struct {
	base, wsBase string
	entries      []*exchange
	bySeq        map[uint64]*exchange   // POSTs by the seq of the request (or batch member) they carried
	open         map[uint32][]*exchange // POSTs by connection, oldest first, until their answer is whole
	streams      map[streamKey]*exchange
	sockets      map[uint32]*exchange
	byFault      map[uint64]*exchange // POSTs whose message acpscope replaced, by fault id
	withheld     int                  // agent messages acpscope kept from the client
}

func newAssembler(meta capture.Meta) *assembler {
	base := "http://localhost"
	switch {
	case meta.Listen != "": // proxy and serve: what the client talked to
		base = "http://" + meta.Listen
	case meta.Upstream != "": // connect: the agent it talked to
		if u, err := url.Parse(meta.Upstream); err == nil && u.Host != "" {
			base = u.Scheme + "://" + u.Host
		}
	}
	ws := "ws" + strings.TrimPrefix(base, "http")
	return &assembler{base: base, wsBase: ws, bySeq: map[uint64]*exchange{}, open: map[uint32][]*exchange{},
		streams: map[streamKey]*exchange{}, sockets: map[uint32]*exchange{}, byFault: map[uint64]*exchange{}}
}

// add takes one record carrying an HTTP envelope (batch members too: a
// response names the member it answers).
func (a *assembler) add(r *capture.Record) {
	env := r.HTTP
	if r.Flags&wire.FlagBatchMember != 0 {
		if x := a.bySeq[r.Parent]; x != nil {
			a.bySeq[r.Seq] = x
		}
		return
	}
	if f := r.Fault; r.Dir == wire.DirAgent && f != nil && (f.Stage == protocol.StageDropped || f.Superseded()) {
		// Dropped, or replaced by a changed copy: the client never
		// received it, and a HAR shows what the client received.
		a.withheld++
		return
	}
	switch env.Stream {
	case wire.StreamPOST:
		if a.changedCopy(r) {
			return
		}
		x := a.newExchange(r, a.base)
		if f := r.Fault; f != nil {
			x.e.Fault = f.String()
			if f.Superseded() {
				a.byFault[f.ID] = x
			}
		}
		x.e.ResourceType = "fetch"
		x.e.Request.PostData = &postData{MimeType: mime(env, "application/json"), Params: []nameVal{}, Text: string(r.Body)}
		x.e.Request.BodySize = len(r.Body)
		x.reqSeq, x.session = r.Seq, firstOf(env.SessionID, r.Session)
		a.bySeq[r.Seq] = x
		a.open[r.Conn] = append(a.open[r.Conn], x)
	case wire.StreamPOSTReply:
		x := a.postFor(r, false)
		a.head(x, r)
		x.text.Write(r.Body)
		a.close(x)
	case wire.StreamPOSTSSE:
		x := a.postFor(r, true)
		a.head(x, r)
		x.sse = true
		event(&x.text, env.EventID, r.Body)
		if r.Kind.IsResponse() && a.bySeq[r.Peer] == x {
			a.close(x)
		}
	case wire.StreamConnection, wire.StreamSession:
		k := streamKey{r.Conn, env.SessionID}
		x := a.streams[k]
		if x == nil { // a capture that missed the stream's opening
			x = a.newExchange(r, a.base)
			x.e.ResourceType = "eventsource"
			a.head(x, r)
			a.streams[k] = x
		}
		event(&x.text, env.EventID, r.Body)
		x.end = r.Time
	case wire.StreamWebSocket:
		a.socketFrame(r)
	case wire.StreamHTTPControl:
		a.control(r)
	}
}

// changedCopy folds the changed copy of a POST's message that acpscope
// sent upstream into the client's POST it replaced: one exchange, whose
// answer is the upstream's answer to the copy. It reports whether r was
// such a copy.
func (a *assembler) changedCopy(r *capture.Record) bool {
	f := r.Fault
	if f == nil || f.Stage != protocol.StageForwarded {
		return false
	}
	x := a.byFault[f.ID]
	if x == nil {
		return false
	}
	delete(a.byFault, f.ID)
	x.e.Fault = f.String()
	x.e.Comment = "acpscope sent upstream instead: " + string(r.Body)
	a.bySeq[r.Seq] = x
	return true
}

// control takes a frame that carries no message: a status alone.
func (a *assembler) control(r *capture.Record) {
	env := r.HTTP
	switch {
	case env.Method == http.MethodPost:
		x := a.oldestWaiting(r.Conn)
		if x == nil {
			x = a.newExchange(r, a.base)
			x.e.Comment = "the request's body was not recorded"
		}
		a.head(x, r)
		x.text.Write(r.Body)
		a.close(x)
	case env.Method == http.MethodGet && env.Status == http.StatusSwitchingProtocols:
		x := a.newExchange(r, a.wsBase)
		x.e.ResourceType = "websocket"
		x.e.WebSocket = []wsFrame{}
		a.head(x, r)
		a.sockets[r.Conn] = x
	case env.Method == http.MethodGet && env.Status == http.StatusOK:
		x := a.newExchange(r, a.base)
		x.e.ResourceType = "eventsource"
		a.head(x, r)
		a.streams[streamKey{r.Conn, env.SessionID}] = x
	default: // a DELETE, or a GET turned away
		x := a.newExchange(r, a.base)
		a.head(x, r)
		x.text.Write(r.Body)
	}
}

// socketFrame adds a WebSocket message, or a close, to its socket.
func (a *assembler) socketFrame(r *capture.Record) {
	x := a.sockets[r.Conn]
	if x == nil {
		x = a.newExchange(r, a.wsBase)
		x.e.ResourceType = "websocket"
		x.e.WebSocket = []wsFrame{}
		x.e.Response.Status = http.StatusSwitchingProtocols
		x.first = r.Time
		a.sockets[r.Conn] = x
	}
	f := wsFrame{Type: "receive", Time: float64(r.Time) / 1e9, Opcode: 1, Data: string(r.Body), Fault: r.Fault.String()}
	if r.Dir == wire.DirClient {
		f.Type = "send"
	}
	switch close := r.HTTP.Headers["ws-close"]; {
	case len(r.Body) == 0 && close != "":
		f.Opcode, f.Data = 8, close
	case r.Flags&wire.FlagBinary != 0:
		f.Opcode, f.Data = 2, base64.StdEncoding.EncodeToString(r.Body)
	}
	x.e.WebSocket = append(x.e.WebSocket, f)
	x.end = r.Time
}

// postFor finds the POST a reply or an SSE event answers: the one whose
// request the record's response pairs with, else for an event the open
// SSE stream of its session, else the oldest POST of its connection still
// waiting for an answer.
func (a *assembler) postFor(r *capture.Record, sse bool) *exchange {
	if x := a.bySeq[r.Peer]; x != nil && r.Kind.IsResponse() {
		return x
	}
	if sse {
		session := firstOf(r.HTTP.SessionID, r.Session)
		list := a.open[r.Conn]
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].sse && list[i].session == session {
				return list[i]
			}
		}
	}
	if x := a.oldestWaiting(r.Conn); x != nil {
		return x
	}
	x := a.newExchange(r, a.base)
	x.e.Comment = "the request was not recorded"
	return x
}

// oldestWaiting is the oldest POST of conn without an answer yet.
func (a *assembler) oldestWaiting(conn uint32) *exchange {
	for _, x := range a.open[conn] {
		if x.first == 0 {
			return x
		}
	}
	return nil
}

// close takes x off its connection's list of open POSTs.
func (a *assembler) close(x *exchange) {
	list := a.open[x.conn]
	for i, y := range list {
		if y == x {
			a.open[x.conn] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// newExchange starts an exchange with the request r's envelope names.
func (a *assembler) newExchange(r *capture.Record, base string) *exchange {
	env := r.HTTP
	x := &exchange{conn: r.Conn, start: r.Time, end: r.Time, e: &entry{
		Request: request{Method: firstOf(env.Method, http.MethodPost), URL: base + firstOf(env.Path, "/"), HTTPVersion: version(env),
			Cookies: []nameVal{}, Headers: requestHeaders(env), QueryString: []nameVal{}, HeadersSize: -1, BodySize: 0},
		Response: response{Cookies: []nameVal{}, Headers: []nameVal{}, HTTPVersion: version(env), HeadersSize: -1, BodySize: -1,
			Content: content{MimeType: "x-unknown"}},
	}}
	if env.ConnectionID != "" {
		x.e.Connection = env.ConnectionID
	}
	a.entries = append(a.entries, x)
	return x
}

// head sets the response's status and headers from the first frame of
// the answer.
func (a *assembler) head(x *exchange, r *capture.Record) {
	if x.first == 0 {
		x.first = r.Time
		resp := &x.e.Response
		resp.Status = r.HTTP.Status
		resp.StatusText = http.StatusText(r.HTTP.Status)
		resp.HTTPVersion = version(r.HTTP)
		resp.Headers = responseHeaders(r.HTTP)
		resp.Content.MimeType = mime(r.HTTP, contentType(r.HTTP.Stream))
		if len(x.e.Request.Headers) == 0 {
			x.e.Request.Headers = requestHeaders(r.HTTP)
		}
	}
	x.end = max(x.end, r.Time)
}

// finish fills in sizes and timings and returns the entries in the
// order their requests began.
func (a *assembler) finish() []*entry {
	sort.SliceStable(a.entries, func(i, j int) bool { return a.entries[i].start < a.entries[j].start })
	out := make([]*entry, len(a.entries))
	for i, x := range a.entries {
		e := x.e
		e.StartedDateTime = time.Unix(0, x.start).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		first := x.first
		if first == 0 {
			first = x.end
		}
		e.Timings = timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: msBetween(x.start, first), Receive: msBetween(first, x.end)}
		e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
		e.Response.Content.Text = x.text.String()
		e.Response.Content.Size = x.text.Len()
		if x.first != 0 {
			e.Response.BodySize = x.text.Len()
		}
		out[i] = e
	}
	return out
}

// event appends one SSE event as it went over the wire.
func event(b *strings.Builder, id string, data []byte) {
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
}

// requestOnly are the kept headers a request sends; an envelope of a
// response frame holds them too, for streams with no request frame.
var requestOnly = map[string]bool{
	"accept": true, "last-event-id": true, "authorization": true, "proxy-authorization": true, "cookie": true, "origin": true,
}

func requestHeaders(env *wire.Envelope) []nameVal {
	h := headers(env, func(name string) bool { return env.Stream == wire.StreamPOST || requestOnly[name] || name == "upgrade" })
	if env.ConnectionID != "" && env.Stream != wire.StreamPOSTReply {
		h = append(h, nameVal{"Acp-Connection-Id", env.ConnectionID})
	}
	if env.SessionID != "" {
		h = append(h, nameVal{"Acp-Session-Id", env.SessionID})
	}
	return h
}

func responseHeaders(env *wire.Envelope) []nameVal {
	h := headers(env, func(name string) bool { return !requestOnly[name] })
	if env.ConnectionID != "" && env.Stream == wire.StreamPOSTReply {
		h = append(h, nameVal{"Acp-Connection-Id", env.ConnectionID})
	}
	return h
}

// headers lists env's headers that keep accepts, in name order.
func headers(env *wire.Envelope, keep func(lower string) bool) []nameVal {
	out := []nameVal{}
	for name, v := range env.Headers {
		lower := strings.ToLower(name)
		if lower != "ws-close" && keep(lower) {
			out = append(out, nameVal{http.CanonicalHeaderKey(name), v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// mime is the Content-Type an envelope kept, or fallback.
func mime(env *wire.Envelope, fallback string) string {
	for k, v := range env.Headers {
		if strings.EqualFold(k, "content-type") && v != "" {
			return v
		}
	}
	return fallback
}

// contentType is what a frame of stream carried when no header says.
func contentType(stream string) string {
	switch stream {
	case wire.StreamPOSTSSE, wire.StreamConnection, wire.StreamSession:
		return "text/event-stream"
	case wire.StreamPOSTReply:
		return "application/json"
	}
	return "text/plain"
}

// version is the HTTP version in HAR's spelling.
func version(env *wire.Envelope) string {
	return firstOf(env.Proto, "HTTP/1.1")
}

func msBetween(from, to int64) float64 {
	if to < from {
		return 0
	}
	return math.Round(float64(to-from)/1e3) / 1e3
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
