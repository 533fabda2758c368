package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
		note := fmt.Sprintf("[gray]… folded after %d lines (%s in all); press x to expand[-]", p.maxLines, humanSize(int64(len(doc))))
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
		key := decodeKey(m.key)
		if blob != "" && (key == "data" || key == "blob") && m.value[0] == '"' && len(m.value) > blobMinLength {
			p.b.WriteString("[orange]<" + tview.Escape(blob) + " " + humanSize(int64(len(m.value)-2)*3/4) + ">[-]")
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
		switch decodeKey(m.key) {
		case "type":
			typ = decodeKey(m.value)
		case "mimeType":
			mime = decodeKey(m.value)
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

func decodeKey(lit []byte) string {
	if len(lit) < 2 || lit[0] != '"' {
		return ""
	}
	if bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

type jsonMember struct{ key, value []byte }

// jsonMembers lists the members of a valid JSON object, exact bytes.
func jsonMembers(obj []byte) []jsonMember {
	var out []jsonMember
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		end := skipString(obj, i)
		key := obj[i:end]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // ':'
		vend := skipValue(obj, i)
		out = append(out, jsonMember{key, obj[i:vend]})
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return out
}

// jsonElements lists the elements of a valid JSON array, exact bytes.
func jsonElements(arr []byte) [][]byte {
	var out [][]byte
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := skipValue(arr, i)
		out = append(out, arr[i:end])
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return out
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string literal at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	return j
}
