package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/replay"
	flag "github.com/spf13/pflag"
)

// infoHelp is `acpscope info`'s synopsis, examples and flags.
func infoHelp() help {
	return help{
		usage: "[CAPTURE] [--format text|json]",
		example: `  acpscope info                                    # the newest capture
  acpscope info latest --format json | jq '.connections[].agentCapabilities'
  acpscope info latest --format json | jq -r '.sessions[] | [.id, .title] | @tsv'`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.String("format", "text", "text or json")
		},
	}
}

func runInfo(fs *flag.FlagSet, args []string) (int, error) {
	format, _ := fs.GetString("format")
	if format != "text" && format != "json" {
		return 2, usageErrorf("unknown --format %q: use text or json", format)
	}
	src, _, code, err := openFiltered(fs, args, oneCapture, capture.OpenComplete)
	if err != nil {
		return code, err
	}
	defer src.Close()
	facts, err := readFacts(src)
	if err != nil {
		return 1, err
	}
	if format == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return 0, enc.Encode(facts)
	}
	return 0, writeFacts(os.Stdout, facts, src.Meta())
}

// writeFacts prints facts for a person: one block per connection and per
// session, then the extensions.
func writeFacts(out io.Writer, f *acpFacts, meta capture.Meta) error {
	w := &factWriter{w: out}
	about := filepath.Base(f.Capture)
	if role := capture.Role(meta); role != "" {
		about += " (" + role + ")"
	}
	w.line("capture", about)
	if len(f.Connections) == 0 {
		w.text("\nno initialize in this capture: it starts after the connection was set up\n")
	}
	for _, c := range f.Connections {
		w.text(fmt.Sprintf("\nconnection %d (initialize at #%d)\n", c.Conn, c.Seq))
		w.line("  client", peerText(c.Client))
		w.line("  agent", peerText(c.Agent))
		w.line("  protocol", versionText(c))
		w.line("  client can", capabilityText(c.ClientCapabilities))
		w.line("  agent can", capabilityText(c.AgentCapabilities))
		w.line("  auth", choicesText(c.AuthMethods, ""))
		w.line("  error", c.Error)
	}
	for _, s := range f.Sessions {
		head := fmt.Sprintf("\nsession %s (%s, %s)", s.ID, s.Origin, replay.Count(s.Turns, "turn", "turns"))
		if s.Title != "" {
			head += fmt.Sprintf(" %q", s.Title)
		}
		w.text(head + "\n")
		w.line("  mode", currentOf(s.Mode, choicesText(s.Modes, "")))
		w.line("  model", currentOf(s.Model, choicesText(s.Models, "")))
		w.line("  config", configText(s.ConfigOptions))
		w.line("  commands", choicesText(s.Commands, "/"))
	}
	if len(f.Meta) > 0 {
		w.text("\n_meta keys\n")
		for _, m := range f.Meta {
			w.line("  "+m.Key, fmt.Sprintf("×%d from #%d: %s", m.Count, m.FirstSeq, strings.Join(m.Where, "; ")))
		}
	}
	if len(f.Extensions) > 0 {
		w.text("\nmethods beyond the stable schema\n")
		for _, e := range f.Extensions {
			w.line("  "+e.Method, fmt.Sprintf("%s ×%d", e.Stability, e.Count))
		}
	}
	if len(f.Notes) > 0 {
		w.text("\nnotes\n")
		keys := make([]string, 0, len(f.Notes))
		for k := range f.Notes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.line("  "+k, f.Notes[k])
		}
	}
	return w.err
}

// factWriter prints "label  value" lines, skipping empty values, and
// keeps the first error.
type factWriter struct {
	w   io.Writer
	err error
}

func (w *factWriter) line(label, value string) {
	if value != "" {
		w.text(fmt.Sprintf("%-15s %s\n", label, value))
	}
}

func (w *factWriter) text(s string) {
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

func peerText(p *peerInfo) string {
	if p == nil {
		return ""
	}
	s := strings.TrimSpace(p.Name + " " + p.Version)
	if p.Title != "" && p.Title != p.Name {
		s += fmt.Sprintf(" (%s)", p.Title)
	}
	return s
}

func versionText(c *connFacts) string {
	switch {
	case c.AgentVersion == "" && c.ClientVersion == "":
		return ""
	case c.AgentVersion == "":
		return fmt.Sprintf("%s asked by the client, not answered", c.ClientVersion)
	case c.ClientVersion == "" || c.ClientVersion == c.AgentVersion:
		return string(c.AgentVersion)
	}
	return fmt.Sprintf("%s (the client asked for %s)", c.AgentVersion, c.ClientVersion)
}

// capabilityText flattens a capabilities object to the paths it turns
// on: true and present-but-empty objects by name, other values as
// name=value; false ones and _meta (listed on its own) are left out.
func capabilityText(raw json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) == 0 || dec.Decode(&v) != nil {
		return ""
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && prefix != "" {
				out = append(out, prefix)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k != "_meta" {
					walk(strings.TrimPrefix(prefix+"."+k, "."), x[k])
				}
			}
		case bool:
			if x {
				out = append(out, prefix)
			}
		case nil:
		default:
			b, _ := json.Marshal(x)
			out = append(out, prefix+"="+string(b))
		}
	}
	walk("", v)
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " ")
}

// choicesText lists ids (with a prefix, / for commands), and names where
// they say more than the id.
func choicesText(cs []choice, prefix string) string {
	var out []string
	for _, c := range cs {
		s := prefix + c.ID
		if c.Name != "" && c.Name != c.ID {
			s += fmt.Sprintf(" (%s)", c.Name)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func currentOf(current, all string) string {
	switch {
	case current == "":
		return all
	case all == "":
		return current
	}
	return current + "; of " + all
}

func configText(cs []choice) string {
	var out []string
	for _, c := range cs {
		s := c.ID
		if len(c.Value) > 0 {
			var v string
			if json.Unmarshal(c.Value, &v) != nil {
				v = string(c.Value)
			}
			s += "=" + v
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}
