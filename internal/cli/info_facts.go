package cli

// What `acpscope info` reads out of a capture: the ACP facts the two
// sides told each other. Sessions, their origin, title and current mode,
// and the commands and config options they announced come from the
// transcript protocol rebuilds; extension methods are named by the
// catalog; what neither keeps (the initialize exchange, a session's
// choices of mode and model) is read from those few messages here.

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// acpFacts is what `info` prints.
type acpFacts struct {
	Capture     string          `json:"capture"`
	Connections []*connFacts    `json:"connections"`
	Sessions    []*sessionFacts `json:"sessions"`
	Meta        []*metaKey      `json:"metaKeys"`         // keys seen under _meta
	Extensions  []methodSeen    `json:"extensionMethods"` // methods beyond the stable schema
	// Notes are what the recorder said about the capture: losses, what
	// an export or import did, where spans went and how many were lost.
	Notes map[string]string `json:"notes,omitempty"`
}

// connFacts is one initialize exchange (one per transport connection).
type connFacts struct {
	Conn               uint32          `json:"conn"`
	Seq                uint64          `json:"seq"`
	Client             *peerInfo       `json:"client,omitempty"`
	Agent              *peerInfo       `json:"agent,omitempty"`
	ClientVersion      json.Number     `json:"clientProtocolVersion,omitempty"`
	AgentVersion       json.Number     `json:"protocolVersion,omitempty"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	AgentCapabilities  json.RawMessage `json:"agentCapabilities,omitempty"`
	AuthMethods        []choice        `json:"authMethods,omitempty"`
	Error              string          `json:"error,omitempty"`
}

// peerInfo is clientInfo or agentInfo.
type peerInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// choice is one of a list offered: an auth method, a mode, a model, a
// command, a config option (Value is its current value).
type choice struct {
	ID          string          `json:"id"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Value       json.RawMessage `json:"currentValue,omitempty"`
}

// sessionFacts is one ACP session.
type sessionFacts struct {
	ID            string   `json:"id"`
	Origin        string   `json:"origin"` // new, load, resume, fork, unknown
	Title         string   `json:"title,omitempty"`
	Mode          string   `json:"currentMode,omitempty"`
	Modes         []choice `json:"modes,omitempty"`
	Model         string   `json:"currentModel,omitempty"`
	Models        []choice `json:"models,omitempty"`
	ConfigOptions []choice `json:"configOptions,omitempty"`
	Commands      []choice `json:"availableCommands,omitempty"`
	Turns         int      `json:"turns"`
}

// metaKey is a key seen under _meta, and where.
type metaKey struct {
	Key      string   `json:"key"`
	Count    int      `json:"count"`
	FirstSeq uint64   `json:"firstSeq"`
	Where    []string `json:"where"` // method and JSON path, at most maxWhere
}

const maxWhere = 5

// methodSeen is a method beyond the stable schema and how often it came.
type methodSeen struct {
	Method    string `json:"method"`
	Stability string `json:"stability"`
	Count     int    `json:"count"`
}

// infoUpdates are the session/update variants info keeps for the
// transcript; chunks and tool calls, the bulk of a capture, are not read.
var infoUpdates = []string{"available_commands_update", "current_mode_update", "config_option_update", "session_info_update"}

// factsReader collects facts record by record.
type factsReader struct {
	facts    acpFacts
	conns    map[uint32]*connFacts
	sessions map[string]*sessionFacts
	meta     map[string]*metaKey
	methods  map[string]*methodSeen
	msgs     []protocol.Msg // what the transcript is built from
}

// readFacts reads a capture's ACP facts.
func readFacts(src capture.Source) (*acpFacts, error) {
	f := &factsReader{conns: map[uint32]*connFacts{}, sessions: map[string]*sessionFacts{},
		meta: map[string]*metaKey{}, methods: map[string]*methodSeen{}}
	f.facts.Capture = capturePath(src)
	f.facts.Notes = src.Meta().Notes
	var bodyErr error
	err := src.Scan(1, func(r *capture.Record) bool {
		if !r.Kind.IsProtocol() || r.Kind == wire.KindBatch {
			return true // a batch's members are records of their own
		}
		if r.Body, bodyErr = src.Body(r.Seq); bodyErr != nil {
			return false
		}
		f.add(r)
		return true
	})
	if err == nil {
		err = bodyErr
	}
	if err != nil {
		return nil, err
	}
	f.finish()
	return &f.facts, nil
}

func (f *factsReader) add(r *capture.Record) {
	f.metaKeys(r)
	if r.Kind == wire.KindRequest || r.Kind == wire.KindNotification {
		f.method(r.Method)
	}
	switch {
	case r.Method == "initialize":
		f.initialize(r)
		return
	case r.Method == "session/prompt": // counted, not kept: prompts carry images
		if r.Kind == wire.KindRequest {
			f.session(r.Session).Turns++
		}
		return
	case r.Method == "session/update" && !slices.Contains(infoUpdates, protocol.UpdateKind(r.Body)):
		return
	case r.Kind == wire.KindResponse && r.Session != "":
		f.sessionResult(r)
	}
	if strings.HasPrefix(r.Method, "session/") {
		f.msgs = append(f.msgs, r.Msg)
	}
}

// method counts a method the catalog does not call stable.
func (f *factsReader) method(name string) {
	m, known := protocol.Lookup(name)
	if known && m.Stability == protocol.Stable {
		return
	}
	stability := "unknown"
	if known {
		stability = m.Stability.String()
	}
	if f.methods[name] == nil {
		f.methods[name] = &methodSeen{Method: name, Stability: stability}
	}
	f.methods[name].Count++
}

// initialize reads clientInfo and capabilities from the request, and the
// agent's answer from the response, per connection.
func (f *factsReader) initialize(r *capture.Record) {
	c := f.conns[r.Conn]
	if c == nil {
		c = &connFacts{Conn: r.Conn, Seq: r.Seq}
		f.conns[r.Conn] = c
		f.facts.Connections = append(f.facts.Connections, c)
	}
	switch r.Kind {
	case wire.KindRequest:
		var p struct {
			ProtocolVersion    json.Number     `json:"protocolVersion"`
			ClientCapabilities json.RawMessage `json:"clientCapabilities"`
			ClientInfo         *peerInfo       `json:"clientInfo"`
		}
		decodeMember(r.Body, "params", &p)
		c.ClientVersion, c.ClientCapabilities, c.Client = p.ProtocolVersion, p.ClientCapabilities, p.ClientInfo
	case wire.KindResponse:
		var res struct {
			ProtocolVersion   json.Number     `json:"protocolVersion"`
			AgentCapabilities json.RawMessage `json:"agentCapabilities"`
			AgentInfo         *peerInfo       `json:"agentInfo"`
			AuthMethods       []choice        `json:"authMethods"`
		}
		decodeMember(r.Body, "result", &res)
		c.AgentVersion, c.AgentCapabilities, c.Agent, c.AuthMethods = res.ProtocolVersion, res.AgentCapabilities, res.AgentInfo, res.AuthMethods
	case wire.KindError:
		var e struct{ Message string }
		decodeMember(r.Body, "error", &e)
		c.Error = e.Message
	}
}

// sessionResult reads the modes, models and config options a response
// gives a session: session/new, load, resume and fork announce them, and
// set_config_option answers with the whole new list.
func (f *factsReader) sessionResult(r *capture.Record) {
	var res struct {
		Modes *struct {
			Current   string   `json:"currentModeId"`
			Available []choice `json:"availableModes"`
		} `json:"modes"`
		Models *struct {
			Current   string `json:"currentModelId"`
			Available []struct {
				ID          string `json:"modelId"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"availableModels"`
		} `json:"models"`
		ConfigOptions []choice `json:"configOptions"`
	}
	if !decodeMember(r.Body, "result", &res) {
		return
	}
	s := f.session(r.Session)
	if res.Modes != nil {
		s.Mode, s.Modes = res.Modes.Current, res.Modes.Available
	}
	if res.Models != nil {
		s.Model, s.Models = res.Models.Current, nil
		for _, m := range res.Models.Available {
			s.Models = append(s.Models, choice{ID: m.ID, Name: m.Name, Description: m.Description})
		}
	}
	if res.ConfigOptions != nil {
		s.ConfigOptions = res.ConfigOptions
	}
}

func (f *factsReader) session(id string) *sessionFacts {
	s := f.sessions[id]
	if s == nil {
		s = &sessionFacts{ID: id, Origin: "unknown"}
		f.sessions[id] = s
	}
	return s
}

// finish takes what the transcript knows of each session, in the order
// the sessions appeared, and sorts the rest.
func (f *factsReader) finish() {
	t := protocol.BuildTranscript(f.msgs)
	for _, ts := range t.Sessions {
		s := f.session(ts.ID)
		s.Origin, s.Title = ts.Origin, ts.Title
		if ts.Mode != "" {
			s.Mode = ts.Mode // current_mode_update comes after the result
		}
		f.sessionUpdates(s, ts)
		f.facts.Sessions = append(f.facts.Sessions, s)
	}
	for _, s := range f.sessions { // a result whose session the transcript never saw
		if !slices.Contains(f.facts.Sessions, s) {
			f.facts.Sessions = append(f.facts.Sessions, s)
		}
	}
	for _, m := range f.meta {
		f.facts.Meta = append(f.facts.Meta, m)
	}
	sort.Slice(f.facts.Meta, func(i, j int) bool { return f.facts.Meta[i].Key < f.facts.Meta[j].Key })
	for _, m := range f.methods {
		f.facts.Extensions = append(f.facts.Extensions, *m)
	}
	sort.Slice(f.facts.Extensions, func(i, j int) bool { return f.facts.Extensions[i].Method < f.facts.Extensions[j].Method })
}

// sessionUpdates replays the session's info items, which the transcript
// keeps verbatim: the latest list of commands and of config options wins.
func (f *factsReader) sessionUpdates(s *sessionFacts, ts *protocol.Session) {
	for _, turn := range ts.Turns {
		for _, it := range turn.Items {
			if it.Kind != protocol.ItemInfo {
				continue
			}
			var upd struct {
				Commands []struct {
					Name        string `json:"name"`
					Description string `json:"description"`
				} `json:"availableCommands"`
				ConfigOptions []choice `json:"configOptions"`
			}
			if json.Unmarshal(it.Raw, &upd) != nil {
				continue
			}
			switch it.Update {
			case "available_commands_update":
				s.Commands = nil
				for _, c := range upd.Commands {
					s.Commands = append(s.Commands, choice{ID: c.Name, Description: c.Description})
				}
			case "config_option_update":
				s.ConfigOptions = upd.ConfigOptions
			}
		}
	}
}

// metaKeys notes the keys of every _meta object in r's body.
func (f *factsReader) metaKeys(r *capture.Record) {
	if !bytes.Contains(r.Body, []byte(`"_meta"`)) {
		return
	}
	walkMeta(r.Body, func(path, key string) {
		m := f.meta[key]
		if m == nil {
			m = &metaKey{Key: key, FirstSeq: r.Seq}
			f.meta[key] = m
		}
		m.Count++
		where := strings.TrimSpace(r.Method + " " + path)
		if len(m.Where) < maxWhere && !slices.Contains(m.Where, where) {
			m.Where = append(m.Where, where)
		}
	})
}

// walkMeta calls fn with the path (params.update._meta, arrays as []) and
// each key of every _meta object in the JSON value body. It stops at the
// first syntax error: the classifier has vouched for the body already.
func walkMeta(body []byte, fn func(path, key string)) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				sub := strings.TrimPrefix(path+"."+key, ".")
				if key != "_meta" {
					if err := walk(sub); err != nil {
						return err
					}
					continue
				}
				var meta map[string]json.RawMessage
				if err := dec.Decode(&meta); err != nil {
					return err
				}
				for k := range meta {
					fn(sub, k)
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if err := walk(path + "[]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	walk("")
}

// decodeMember decodes the top-level member key of a JSON-RPC body into
// v, numbers kept exact; it reports whether there was one that decoded.
func decodeMember(body []byte, key string, v any) bool {
	raw := wire.Value(body, key)
	if len(raw) == 0 {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v) == nil
}
