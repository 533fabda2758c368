package capture

// Secrets in argument vectors: mcpServers args, terminal/create args, a
// capture's own command line. A long flag whose name names a credential
// takes the next argument (--token VALUE, --api-key VALUE) or its
// =VALUE. Single-letter flags mean different things to different tools
// (-p is a port to psql and ssh, a password to sshpass), so they count
// only for the tools below, where the tool's documentation says so.

import (
	"bytes"
	"strconv"
	"strings"
)

// toolFlags are the single-letter password flags of one tool.
type toolFlags struct {
	next     []string // -p VALUE
	attached []string // -pVALUE
	userPass []string // -u user:PASSWORD
	after    string   // only after this subcommand (docker login)
}

// argvOthers are programs whose single-letter flags mean something else
// (ssh -p PORT, psql -p PORT, mkdir -p): meeting one ends the tool before.
var argvOthers = setOf("ssh", "scp", "sftp", "psql", "pg_dump", "pg_restore", "mkdir", "cp", "rsync", "nc",
	"ncat", "git", "kubectl", "python", "python3", "node", "npx", "uvx", "bash", "sh", "zsh", "env", "sudo")

var argvTools = map[string]toolFlags{
	"sshpass":      {next: []string{"-p"}, attached: []string{"-p"}},
	"mysql":        {attached: []string{"-p"}}, // "-p VALUE" prompts and names a database
	"mysqldump":    {attached: []string{"-p"}},
	"mysqladmin":   {attached: []string{"-p"}},
	"mariadb":      {attached: []string{"-p"}},
	"mariadb-dump": {attached: []string{"-p"}},
	"redis-cli":    {next: []string{"-a"}},
	"curl":         {userPass: []string{"-u", "--user"}},
	"docker":       {next: []string{"-p"}, after: "login"},
	"podman":       {next: []string{"-p"}, after: "login"},
	"sqlcmd":       {next: []string{"-P"}},
}

// argvScan reads one argument vector element by element.
type argvScan struct {
	tool    string
	flags   toolFlags
	sub     bool   // the tool's subcommand (after) was seen
	pending string // "next" or "userpass": what the next element holds
	flag    string
	last    int
}

func newArgvScan(tool string) *argvScan {
	a := &argvScan{last: -2}
	a.setTool(tool)
	return a
}

func (a *argvScan) setTool(name string) {
	if t, ok := argvTools[name]; ok {
		a.tool, a.flags, a.sub = name, t, false
	} else if argvOthers[name] {
		a.tool, a.flags, a.sub = "", toolFlags{}, false
	}
}

// programName reports whether arg names a program argvScan knows.
func programName(arg []byte) bool {
	n := toolName(arg)
	_, tool := argvTools[n]
	return tool || argvOthers[n]
}

// toolName is an argument's program name: its base name without .exe.
func toolName(arg []byte) string {
	if i := bytes.LastIndexAny(arg, `/\`); i >= 0 {
		arg = arg[i+1:]
	}
	return strings.TrimSuffix(string(arg), ".exe")
}

// step reads element idx and returns the span of a secret in it, if any.
// Indexes that skip one forget a pending flag.
func (a *argvScan) step(idx int, arg []byte) (start, end int, rule string, ok bool) {
	if idx != a.last+1 {
		a.pending = ""
	}
	a.last = idx
	if p := a.pending; p != "" {
		a.pending = ""
		rule = "value of " + a.flag
		if p == "userpass" {
			if c := bytes.IndexByte(arg, ':'); c >= 0 && c+1 < len(arg) {
				return c + 1, len(arg), rule, true
			}
			return 0, 0, "", false
		}
		if len(arg) > 0 && !bytes.HasPrefix(arg, []byte("--")) {
			return 0, len(arg), rule, true
		}
	}
	if len(arg) == 0 || arg[0] != '-' {
		if string(arg) == a.flags.after {
			a.sub = true
		}
		a.setTool(toolName(arg))
		return 0, 0, "", false
	}
	return a.flagArg(arg)
}

// flagArg reads an argument that starts with a dash.
func (a *argvScan) flagArg(arg []byte) (start, end int, rule string, ok bool) {
	name, value, eq := bytes.Cut(arg, []byte("="))
	bare := strings.TrimLeft(string(name), "-")
	if len(bare) >= 3 && isFlagName(bare) && credentialName(bare) {
		if eq {
			return len(name) + 1, len(arg), "value of " + string(name), len(value) > 0
		}
		a.pending, a.flag = "next", string(name)
		return 0, 0, "", false
	}
	t := a.flags
	if t.after != "" && !a.sub {
		return 0, 0, "", false
	}
	flag := string(name)
	switch {
	case containsString(t.userPass, flag) && eq:
		if c := bytes.IndexByte(value, ':'); c >= 0 && c+1 < len(value) {
			return len(name) + 1 + c + 1, len(arg), "value of " + flag, true
		}
	case containsString(t.userPass, flag):
		a.pending, a.flag = "userpass", flag
	case containsString(t.next, flag) && !eq:
		a.pending, a.flag = "next", flag
	}
	for _, p := range t.attached {
		if strings.HasPrefix(string(arg), p) && len(arg) > len(p) && !eq {
			return len(p), len(arg), "value of " + p, true
		}
	}
	return 0, 0, "", false
}

func isFlagName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.' {
			return false
		}
	}
	return true
}

// Argv returns a copy of args with the secrets given on the command line
// redacted (flag values and, as in any text, token shapes), and what was
// redacted; paths are "argv.N".
func (r *Redactor) Argv(args []string) ([]string, []Redaction) {
	out := make([]string, len(args))
	var found []Redaction
	scan := newArgvScan("")
	for i, arg := range args {
		b := []byte(arg)
		spans := r.textSpans(b, false)
		if s, e, rule, ok := scan.step(i, b); ok {
			spans = mergeSpans(append(spans, span{start: s, end: e, kind: rule}))
		}
		out[i] = string(applySpans(b, spans))
		if len(spans) > 0 {
			found = append(found, Redaction{Path: "argv." + strconv.Itoa(i), Rule: spanKinds(spans)})
		}
	}
	return out, found
}

// commandHints are the tools of argvTools; a text naming none of them
// has no command line worth reading word by word.
var commandHints = hints("sshpass", "mysql", "mariadb", "redis-cli", "curl", "docker", "podman", "sqlcmd")

var commandHintTable = newHintTable(commandHints)

// commandSpans reads a command line written as text (a shell's -c
// argument, a terminal's command string) as an argument vector, so that
// "mysql -uroot -pSECRET" is judged as ["mysql", "-uroot", "-pSECRET"].
func commandSpans(b []byte, json bool, add func(span)) {
	if !holdsAny(b, commandHints, commandHintTable) {
		return
	}
	scan := newArgvScan("")
	idx := 0
	forEachWord(b, json, func(s, e int) {
		if st, en, rule, ok := scan.step(idx, b[s:e]); ok {
			add(span{start: s + st, end: s + en, kind: rule})
		}
		idx++
	})
}

// forEachWord calls fn with the span of each shell-ish word of b: runs
// between blanks, quotes and command separators, and inside a JSON
// string between escapes too (\n, \").
func forEachWord(b []byte, json bool, fn func(s, e int)) {
	start := -1
	for i := 0; i < len(b); i++ {
		n := 0
		switch c := b[i]; {
		case json && c == '\\':
			n = 2
			if i+1 < len(b) && b[i+1] == 'u' {
				n = 6
			}
		case strings.IndexByte(" \t\r\n\"'`();|&<>", c) >= 0:
			n = 1
		}
		if n == 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(start, i)
			start = -1
		}
		i += n - 1
	}
	if start >= 0 {
		fn(start, len(b))
	}
}
