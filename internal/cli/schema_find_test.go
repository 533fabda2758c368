package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stageSDK lays out an installed @agentclientprotocol/sdk under root's
// node_modules, with the schema files the named layout ships.
func stageSDK(t *testing.T, root, version string, files ...string) string {
	t.Helper()
	mini, err := os.ReadFile(filepath.Join("..", "..", "protocol", "testdata", "schema", "acp-mini.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "node_modules", "@agentclientprotocol", "sdk")
	for _, f := range files {
		p := filepath.Join(pkg, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, mini, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@agentclientprotocol/sdk","version":"`+version+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestFindSchema(t *testing.T) {
	current := []string{"schema/v1/schema.json", "schema/v2/schema.json"}
	tests := []struct {
		name    string
		stage   func(t *testing.T, root string) schemaLookup
		version int
		want    string // path suffix, or "" for an error
		from    string
		say     []string // in describe(), or in the error
	}{
		{"env names a file", func(t *testing.T, root string) schemaLookup {
			pkg := stageSDK(t, root, "2.4.0", current...)
			return lookupWith(map[string]string{schemaEnv: filepath.Join(pkg, "schema", "v1", "schema.json")}, t.TempDir(), nil)
		}, 2, "schema/v1/schema.json", "$ACPSCOPE_SCHEMA", []string{"@agentclientprotocol/sdk 2.4.0", "protocol v1 schema"}},
		{"env names the package: the negotiated version", func(t *testing.T, root string) schemaLookup {
			pkg := stageSDK(t, root, "2.4.0", current...)
			return lookupWith(map[string]string{schemaEnv: pkg}, t.TempDir(), nil)
		}, 2, "schema/v2/schema.json", "$ACPSCOPE_SCHEMA", []string{"protocol v2 schema"}},
		{"env names nothing there", func(t *testing.T, root string) schemaLookup {
			return lookupWith(map[string]string{schemaEnv: filepath.Join(root, "gone.json")}, root, nil)
		}, 1, "", "", []string{"$ACPSCOPE_SCHEMA=", "gone.json"}},
		{"node_modules two levels up", func(t *testing.T, root string) schemaLookup {
			stageSDK(t, root, "2.4.0", current...)
			cwd := filepath.Join(root, "a", "b")
			os.MkdirAll(cwd, 0o755)
			return lookupWith(nil, cwd, nil)
		}, 0, "schema/v1/schema.json", "node_modules", []string{"@agentclientprotocol/sdk 2.4.0"}},
		{"an older package's single schema", func(t *testing.T, root string) schemaLookup {
			stageSDK(t, root, "0.4.5", "schema/schema.json")
			return lookupWith(nil, root, nil)
		}, 1, "schema/schema.json", "node_modules", []string{"0.4.5"}},
		{"npm's global root", func(t *testing.T, root string) schemaLookup {
			global := filepath.Join(root, "global")
			stageSDK(t, global, "2.1.0", current...)
			return lookupWith(nil, t.TempDir(), func() (string, error) { return filepath.Join(global, "node_modules"), nil })
		}, 1, "schema/v1/schema.json", "npm root -g", []string{"2.1.0"}},
		{"nowhere, no npm", func(t *testing.T, root string) schemaLookup {
			return lookupWith(nil, root, nil)
		}, 1, "", "", []string{"$ACPSCOPE_SCHEMA (unset)", "{root}/node_modules/@agentclientprotocol/sdk", "npm root -g (npm is not on PATH)", "npm install @agentclientprotocol/sdk"}},
		{"nowhere, npm fails", func(t *testing.T, root string) schemaLookup {
			return lookupWith(nil, root, func() (string, error) { return "", errors.New("exit 1") })
		}, 1, "", "", []string{"npm root -g (it failed: exit 1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			found, err := findSchema(tt.version, tt.stage(t, root))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("found %+v, want an error", found)
				}
				for _, s := range tt.say {
					s = strings.ReplaceAll(s, "{root}", root)
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(filepath.ToSlash(found.path), tt.want) || !strings.Contains(found.from, tt.from) {
				t.Errorf("found %+v, want …%s via %s", found, tt.want, tt.from)
			}
			for _, s := range append(tt.say, found.path) {
				if !strings.Contains(found.describe(), s) {
					t.Errorf("describe() = %q, lacks %q", found.describe(), s)
				}
			}
		})
	}
}

func lookupWith(env map[string]string, cwd string, npmRoot func() (string, error)) schemaLookup {
	return schemaLookup{env: func(k string) string { return env[k] }, cwd: cwd, npmRoot: npmRoot}
}

// TestLintAutoSchema: lint --schema without a file validates against the
// schema it finds, says which, and tells a missing one from a bad capture.
func TestLintAutoSchema(t *testing.T) {
	dir := t.TempDir()
	capPath := filepath.Join(dir, "c.acpscope")
	jsonl := filepath.Join(dir, "c.jsonl")
	os.WriteFile(jsonl, []byte(`{"dir":"client","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"one"}}}`+"\n"+
		`{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}}`+"\n"), 0o600)
	importCapture(t, jsonl, capPath)
	pkg := stageSDK(t, t.TempDir(), "2.4.0", "schema/v1/schema.json")

	run := runCLIEnv(t, []string{schemaEnv + "=" + pkg}, "lint", "--no-save", "--schema", capPath)
	if run.code != 1 || !strings.Contains(run.stdout, "schema/invalid") || !strings.Contains(run.stderr, "@agentclientprotocol/sdk 2.4.0, protocol v1 schema, found via $ACPSCOPE_SCHEMA") {
		t.Errorf("lint --schema CAPTURE: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	// The form from before --schema took an optional value still works.
	run = runCLIEnv(t, nil, "lint", "--no-save", "--schema", filepath.Join(pkg, "schema", "v1", "schema.json"), capPath)
	if run.code != 1 || !strings.Contains(run.stdout, "schema/invalid") {
		t.Errorf("lint --schema FILE CAPTURE: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	run = runCLIEnv(t, []string{schemaEnv + "=" + filepath.Join(dir, "nothing")}, "lint", "--no-save", "--schema", capPath)
	if run.code != 2 || !strings.Contains(run.stderr, "$ACPSCOPE_SCHEMA=") {
		t.Errorf("lint with a schema that is not there: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
}

// runCLIEnv is runCLI with extra environment and no stdin.
func runCLIEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := cliCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(interface{ ExitCode() int }); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running acpscope %q: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}
