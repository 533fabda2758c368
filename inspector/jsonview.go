package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/wire"
	"github.com/rivo/tview"
)

// Limits of the detail pane before the user asks for everything (x).
const (
	foldLines     = 1500      // lines of pretty JSON shown folded
	foldString    = 600       // characters of one string shown folded
	blobMinLength = 64        // shorter base64 values are shown as they are
	rawFoldBytes  = 64 * 1024 // bytes of raw view shown folded
	expandedLines = 200000    // a hard cap even when expanded
)

// prettyJSON renders valid JSON indented and colour-tagged for a tview
// TextView, from the exact bytes: key order, number spelling and string
// escapes are the wire's. Base64 media (image, audio data, resource blob)
// shows as <image/png 2.3 MB> and long values are folded unless expand.
func prettyJSON(doc []byte, expand bool) string {
	doc = bytes.TrimSpace(doc)
	if !json.Valid(doc) {
		return ""
	}
	p := &printer{expand: expand, maxLines: foldLines}
	if expand {
		p.maxLines = expandedLines
	}
	p.value(doc, 0)
	if p.folded {
		// Said at both ends: the top is what is seen first.
		note := fmt.Sprintf("[gray]… folded after %d lines (%s in all); press x to expand[-]", p.maxLines, human.Size(int64(len(doc))))
		return note + "\n" + p.b.String() + "\n" + note
	}
	return p.b.String()
}

type printer struct {
	b        strings.Builder
	expand   bool
	lines    int
	maxLines int
	folded   bool
}

func (p *printer) newline(indent int) {
	p.lines++
	if p.lines >= p.maxLines {
		p.folded = true
		return
	}
	p.b.WriteByte('\n')
	p.b.WriteString(strings.Repeat("  ", indent))
}

func (p *printer) value(v []byte, indent int) {
	if p.folded {
		return
	}
	switch v[0] {
	case '{':
		p.object(v, indent)
	case '[':
		p.array(v, indent)
	case '"':
		p.str(v)
	case 't', 'f', 'n':
		p.b.WriteString("[fuchsia]" + string(v) + "[-]")
	default:
		p.b.WriteString("[yellow]" + string(v) + "[-]")
	}
}

func (p *printer) object(obj []byte, indent int) {
	members := jsonMembers(obj)
	if len(members) == 0 {
		p.b.WriteString("{}")
		return
	}
	blob := ""
	if !p.expand {
		blob = blobLabel(obj)
	}
	p.b.WriteByte('{')
	for i, m := range members {
		p.newline(indent + 1)
		if p.folded {
			return
		}
		p.b.WriteString("[aqua]" + tview.Escape(string(m.key)) + "[-]: ")
		key := wire.Unquote(m.key)
		if blob != "" && (key == "data" || key == "blob") && m.value[0] == '"' && len(m.value) > blobMinLength {
			p.b.WriteString("[orange]<" + tview.Escape(blob) + " " + human.Size(int64(len(m.value)-2)*3/4) + ">[-]")
		} else {
			p.value(m.value, indent+1)
		}
		if i < len(members)-1 {
			p.b.WriteByte(',')
		}
	}
	p.newline(indent)
	p.b.WriteByte('}')
}

func (p *printer) array(arr []byte, indent int) {
	elems := jsonElements(arr)
	if len(elems) == 0 {
		p.b.WriteString("[]")
		return
	}
	p.b.WriteByte('[')
	for i, e := range elems {
		p.newline(indent + 1)
		if p.folded {
			return
		}
		p.value(e, indent+1)
		if i < len(elems)-1 {
			p.b.WriteByte(',')
		}
	}
	p.newline(indent)
	p.b.WriteByte(']')
}

func (p *printer) str(lit []byte) {
	s := string(lit)
	if !p.expand && len(s) > foldString {
		s = s[:foldString] + fmt.Sprintf("…(%d more bytes; x expands)", len(s)-foldString)
		s = strings.ToValidUTF8(s, "�")
	}
	p.b.WriteString("[green]" + tview.Escape(s) + "[-]")
}

// blobLabel names the media of a content block or resource that carries
// base64 data: "image/png", "audio/wav", or the block type.
func blobLabel(obj []byte) string {
	var typ, mime string
	var hasData, hasBlob bool
	for _, m := range jsonMembers(obj) {
		switch wire.Unquote(m.key) {
		case "type":
			typ = wire.Unquote(m.value)
		case "mimeType":
			mime = wire.Unquote(m.value)
		case "data":
			hasData = true
		case "blob":
			hasBlob = true
		}
	}
	// Only media carry base64: an error's "data" is shown as it is.
	media := hasBlob || hasData && (mime != "" || typ == "image" || typ == "audio")
	switch {
	case !media:
		return ""
	case mime != "":
		return mime
	case typ != "":
		return typ
	}
	return "base64"
}

type jsonMember struct{ key, value []byte }

// jsonMembers lists the members of a valid JSON object: each key as
// written and its value's exact bytes.
func jsonMembers(obj []byte) []jsonMember {
	var out []jsonMember
	wire.Members(obj, func(key, value []byte) bool {
		out = append(out, jsonMember{key, value})
		return true
	})
	return out
}

// jsonElements lists the elements of a valid JSON array, exact bytes.
func jsonElements(arr []byte) [][]byte {
	var out [][]byte
	wire.Elements(arr, func(el []byte) bool {
		out = append(out, el)
		return true
	})
	return out
}
