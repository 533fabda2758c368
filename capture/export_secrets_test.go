package capture

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestExportIssueSecrets: the six secrets a planted-secret run found in a
// default export, each through the real writer and Export.
func TestExportIssueSecrets(t *testing.T) {
	const session = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`
	tests := []struct {
		name, secret string
		line         expLine
	}{
		{"tool call rawInput.api_key", "FAKEapiKeyEXAMPLE1", expLine{StreamAgent,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"api_key":"FAKEapiKeyEXAMPLE1"}}}}`}},
		{"tool call rawInput.password", "FAKEpasswordEXAMPLE2", expLine{StreamAgent,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"password":"FAKEpasswordEXAMPLE2"}}}}`}},
		{"terminal/create env DB_PASSWORD", "FAKEdbEXAMPLE3", expLine{StreamAgent,
			`{"jsonrpc":"2.0","id":9,"method":"terminal/create","params":{"sessionId":"s1","command":"psql","env":[{"name":"DB_PASSWORD","value":"FAKEdbEXAMPLE3"}]}}`}},
		{"PEM key in fs/write_text_file", "FAKEEXAMPLEpemBody4", expLine{StreamAgent,
			`{"jsonrpc":"2.0","id":9,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"k","content":"-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEEXAMPLEpemBody4\n-----END RSA PRIVATE KEY-----\n"}}`}},
		{"URL userinfo password", "FAKEpassEXAMPLE5", expLine{StreamAgent,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"https://admin:FAKEpassEXAMPLE5@db.example/"}}}}`}},
		{"mcpServers args --token", "FAKEtokenEXAMPLE6", expLine{StreamClient,
			`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s1","cwd":"/w","mcpServers":[{"name":"m","command":"x","args":["--token","FAKEtokenEXAMPLE6"],"env":[]}]}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := expCapture(t, []expLine{{StreamAgent, session}, tt.line})
			r, err := Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			dst := filepath.Join(t.TempDir(), "bug.acpscope")
			if _, err := Export(r, dst, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			_, recs := expRecords(t, dst)
			for _, rec := range recs {
				if bytes.Contains(rec.Body, []byte(tt.secret)) {
					t.Errorf("record %d keeps the secret: %s", rec.Seq, rec.Body)
				}
			}
			if len(recs) != 2 {
				t.Errorf("%d records exported, want 2", len(recs))
			}
		})
	}
}
