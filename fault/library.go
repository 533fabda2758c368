package fault

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// The ready-made plans, one question each (see plans/*.yaml).
//
//go:embed plans/*.yaml
var library embed.FS

// Builtins returns the names of the ready-made plans, sorted.
func Builtins() []string {
	entries, _ := fs.ReadDir(library, "plans")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Builtin returns the text of a ready-made plan.
func Builtin(name string) ([]byte, bool) {
	b, err := library.ReadFile(path.Join("plans", name+".yaml"))
	return b, err == nil
}

// Summary returns the first sentence of a plan's leading comment,
// without its "name: " ("" if none).
func Summary(src []byte) string {
	var words []string
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		words = append(words, strings.TrimSpace(strings.TrimPrefix(line, "#")))
	}
	s := strings.Join(words, " ")
	if _, after, ok := strings.Cut(s, ": "); ok {
		s = after
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// Load reads the plan at file, or the ready-made plan of that name when
// no such file exists.
func Load(file string) (*Plan, error) {
	src, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		if b, ok := Builtin(file); ok {
			return Parse(file, b)
		}
		return nil, fmt.Errorf("fault plan %s: no such file, nor a ready-made plan (%s)", file, strings.Join(Builtins(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("fault plan: %w", err)
	}
	return Parse(file, src)
}
