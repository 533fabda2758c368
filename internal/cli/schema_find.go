package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Where `lint --schema` (without a file) looks for the official ACP JSON
// schema: it ships inside the @agentclientprotocol/sdk npm package, as
// schema/v1/schema.json and schema/v2/schema.json (older releases: one
// schema/schema.json), and in the agent-client-protocol releases.

// schemaEnv names the variable that points at a schema file, or at a
// directory holding one (an unpacked package or release).
const schemaEnv = "ACPSCOPE_SCHEMA"

// sdkPackage is the npm package that ships the schema.
const sdkPackage = "@agentclientprotocol/sdk"

// foundSchema is a schema file lint found, and what it is.
type foundSchema struct {
	path    string
	pkg     string // "@agentclientprotocol/sdk 2.4.0", "" when not from the package
	version int    // the protocol version of its directory (schema/v2/…), 0 when unversioned
	from    string // where it was found: "$ACPSCOPE_SCHEMA", "./node_modules", "npm root -g"
}

// describe says which schema lint uses, for stderr.
func (f foundSchema) describe() string {
	var what []string
	if f.pkg != "" {
		what = append(what, f.pkg)
	}
	if f.version > 0 {
		what = append(what, fmt.Sprintf("protocol v%d schema", f.version))
	}
	what = append(what, "found via "+f.from)
	return fmt.Sprintf("schema %s (%s)", f.path, strings.Join(what, ", "))
}

// schemaLookup is what findSchema consults, so tests can stage it.
type schemaLookup struct {
	env     func(string) string
	cwd     string
	npmRoot func() (string, error) // nil: npm is not on PATH
}

// systemSchemaLookup consults the process's environment, working
// directory and, when npm is on PATH, its global root.
func systemSchemaLookup() schemaLookup {
	cwd, _ := os.Getwd()
	l := schemaLookup{env: os.Getenv, cwd: cwd}
	if npm, err := exec.LookPath("npm"); err == nil {
		l.npmRoot = func() (string, error) {
			out, err := exec.Command(npm, "root", "-g").Output()
			return strings.TrimSpace(string(out)), err
		}
	}
	return l
}

// findSchema looks for the official schema of protocol version v (1 when
// unknown) and returns it, or an error that lists where it looked.
func findSchema(v int, l schemaLookup) (foundSchema, error) {
	if v < 1 {
		v = 1
	}
	var looked []string
	if p := l.env(schemaEnv); p != "" {
		f, err := schemaAt(p, v)
		if err == nil {
			f.from = "$" + schemaEnv
			return f, nil
		}
		return foundSchema{}, fmt.Errorf("$%s=%s: %v", schemaEnv, p, err)
	}
	looked = append(looked, "$"+schemaEnv+" (unset)")
	for dir := l.cwd; dir != ""; {
		pkg := filepath.Join(dir, "node_modules", filepath.FromSlash(sdkPackage))
		if f, err := schemaAt(pkg, v); err == nil {
			f.from = filepath.Join(dir, "node_modules")
			return f, nil
		}
		looked = append(looked, pkg)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if l.npmRoot == nil {
		looked = append(looked, "npm root -g (npm is not on PATH)")
	} else if root, err := l.npmRoot(); err != nil || root == "" {
		looked = append(looked, fmt.Sprintf("npm root -g (it failed: %v)", err))
	} else {
		pkg := filepath.Join(root, filepath.FromSlash(sdkPackage))
		if f, err := schemaAt(pkg, v); err == nil {
			f.from = "npm root -g"
			return f, nil
		}
		looked = append(looked, pkg+" (npm root -g)")
	}
	return foundSchema{}, fmt.Errorf("no ACP schema found; looked in:\n  %s\ninstall it (npm install %s), set $%s to a schema.json from the agent-client-protocol releases, or pass --schema=FILE",
		strings.Join(looked, "\n  "), sdkPackage, schemaEnv)
}

// schemaAt finds the schema of version v at p: a schema file itself, or
// a directory laid out as the package (schema/vN/schema.json, then
// schema/schema.json) or as the repository's schema directory.
func schemaAt(p string, v int) (foundSchema, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return foundSchema{}, errors.New("no such file or directory")
	}
	if !fi.IsDir() {
		return foundSchema{path: p, pkg: packageOf(filepath.Dir(p)), version: versionDir(p)}, nil
	}
	vdir := "v" + strconv.Itoa(v)
	for _, rel := range []string{filepath.Join("schema", vdir, "schema.json"), filepath.Join(vdir, "schema.json"),
		filepath.Join("schema", "schema.json"), "schema.json"} {
		file := filepath.Join(p, rel)
		if fi, err := os.Stat(file); err == nil && !fi.IsDir() {
			return foundSchema{path: file, pkg: packageOf(p), version: versionDir(file)}, nil
		}
	}
	return foundSchema{}, fmt.Errorf("no schema/%s/schema.json or schema/schema.json in it", vdir)
}

// versionDir reads the protocol version from a schema's directory name
// (…/v2/schema.json), 0 when it has none.
func versionDir(file string) int {
	d := filepath.Base(filepath.Dir(file))
	if n, err := strconv.Atoi(strings.TrimPrefix(d, "v")); err == nil && strings.HasPrefix(d, "v") {
		return n
	}
	return 0
}

// packageOf names the npm package at dir or one of its two parents (the
// schema sits at most two levels inside it), "" when there is none.
func packageOf(dir string) string {
	for i := 0; i < 3; i++ {
		var pkg struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && json.Unmarshal(b, &pkg) == nil && pkg.Name != "" {
			return strings.TrimSpace(pkg.Name + " " + pkg.Version)
		}
		dir = filepath.Dir(dir)
	}
	return ""
}
