package har

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// ErrNotHTTP: the capture holds no HTTP or WebSocket traffic.
var ErrNotHTTP = errors.New("HAR needs a capture recorded over HTTP or WebSocket (acpscope proxy, serve or connect); this one holds stdio traffic only: export it with --format html, jsonl or capture")

// The HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/).
type (
	archive struct {
		Log harLog `json:"log"`
	}
	harLog struct {
		Version string   `json:"version"`
		Creator creator  `json:"creator"`
		Entries []*entry `json:"entries"`
		Comment string   `json:"comment,omitempty"`
	}
	creator struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	entry struct {
		StartedDateTime string    `json:"startedDateTime"`
		Time            float64   `json:"time"`
		Request         request   `json:"request"`
		Response        response  `json:"response"`
		Cache           struct{}  `json:"cache"`
		Timings         timings   `json:"timings"`
		Connection      string    `json:"connection,omitempty"`
		Comment         string    `json:"comment,omitempty"`
		ResourceType    string    `json:"_resourceType,omitempty"`
		WebSocket       []wsFrame `json:"_webSocketMessages,omitempty"`
		// Fault says what acpscope did to the POST's message, as on a
		// WebSocket message; a changed copy sent upstream is in Comment.
		Fault string `json:"_acpscopeFault,omitempty"`
	}
	request struct {
		Method      string    `json:"method"`
		URL         string    `json:"url"`
		HTTPVersion string    `json:"httpVersion"`
		Cookies     []nameVal `json:"cookies"`
		Headers     []nameVal `json:"headers"`
		QueryString []nameVal `json:"queryString"`
		PostData    *postData `json:"postData,omitempty"`
		HeadersSize int       `json:"headersSize"`
		BodySize    int       `json:"bodySize"`
	}
	response struct {
		Status      int       `json:"status"`
		StatusText  string    `json:"statusText"`
		HTTPVersion string    `json:"httpVersion"`
		Cookies     []nameVal `json:"cookies"`
		Headers     []nameVal `json:"headers"`
		Content     content   `json:"content"`
		RedirectURL string    `json:"redirectURL"`
		HeadersSize int       `json:"headersSize"`
		BodySize    int       `json:"bodySize"`
	}
	nameVal struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	postData struct {
		MimeType string    `json:"mimeType"`
		Params   []nameVal `json:"params"`
		Text     string    `json:"text"`
	}
	content struct {
		Size     int    `json:"size"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text,omitempty"`
		Encoding string `json:"encoding,omitempty"`
	}
	timings struct {
		Blocked float64 `json:"blocked"`
		DNS     float64 `json:"dns"`
		Connect float64 `json:"connect"`
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
		SSL     float64 `json:"ssl"`
	}
	// wsFrame is one WebSocket message as Chrome writes it in a HAR.
	wsFrame struct {
		Type   string  `json:"type"` // "send" or "receive"
		Time   float64 `json:"time"` // unix seconds
		Opcode int     `json:"opcode"`
		Data   string  `json:"data"`
		// Fault says what acpscope did to the message (a fault plan, a
		// hold, a hand-sent message); HAR allows fields starting with _.
		Fault string `json:"_acpscopeFault,omitempty"`
	}
)

// Export writes src as a HAR 1.2 document to w: every session, or the
// one opts.Session names; redacted unless opts.NoRedact. A capture
// without HTTP traffic gives ErrNotHTTP.
func Export(src capture.Source, w io.Writer, opts capture.ExportOptions) (capture.ExportResult, error) {
	if src.Meta().Transport == "stdio" {
		return capture.ExportResult{}, ErrNotHTTP
	}
	opts.AllSessions = true // HAR shows the traffic, whichever session it was
	ex, err := capture.NewExporter(src, opts)
	if err != nil {
		return capture.ExportResult{}, err
	}
	meta := ex.Meta()
	a := newAssembler(meta)
	err = ex.Each(true, func(r *capture.Record) error {
		if r.HTTP != nil && r.Kind != wire.KindStderr {
			a.add(r)
		}
		return nil
	})
	if err != nil {
		return ex.Result(), fmt.Errorf("reading the capture: %w", err)
	}
	if len(a.entries) == 0 {
		return ex.Result(), ErrNotHTTP
	}
	comment := "ACP traffic recorded by acpscope; " + redactedNote(ex.Redacting())
	if a.withheld > 0 {
		comment += fmt.Sprintf("; %d agent messages acpscope dropped or replaced are left out, as the client never received them (the capture has them)", a.withheld)
	}
	doc := archive{Log: harLog{Version: "1.2", Creator: creator{Name: "acpscope", Version: meta.ProxyVersion}, Entries: a.finish(),
		Comment: comment}}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return ex.Result(), fmt.Errorf("writing the HAR: %w", err)
	}
	return ex.Result(), bw.Flush()
}

func redactedNote(redacted bool) string {
	if redacted {
		return "secrets redacted"
	}
	return "NOT redacted: every secret that was on the wire is here"
}
