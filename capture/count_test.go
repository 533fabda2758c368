package capture

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// TestCountSkipsHoles: a commit that failed leaves a hole in the
// sequence; Count is what the file holds, not the last sequence number.
func TestCountSkipsHoles(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true})
	var lines strings.Builder
	for i := range 600 {
		lines.WriteString(notif(i) + "\n")
	}
	w.Chunk(0, StreamClient, time.Now().UnixNano(), []byte(lines.String()))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Drop the second segment's records and bodies, as a commit that
	// failed would have left them: never written, the last seq beyond.
	db := mustBolt(t, w.Path())
	var dropped uint64
	err := db.Update(func(tx *boltTx) error {
		c := tx.Bucket(bucketMsgs).Cursor()
		c.First()
		k, v := c.Next()
		if k == nil {
			t.Fatal("the capture has a single segment; the test needs two or more")
		}
		dropped, _ = binary.Uvarint(v[1:])
		key := append([]byte(nil), k...)
		if err := tx.Bucket(bucketBodies).Delete(key); err != nil {
			return err
		}
		return tx.Bucket(bucketMsgs).Delete(key)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := openTest(t, w.Path())
	n, err := r.Count()
	if err != nil {
		t.Fatal(err)
	}
	if held := uint64(len(readAll(t, r))); n != held || n != 600-dropped || r.Last() != 600 {
		t.Errorf("Count %d, Scan finds %d, Last %d; want %d held of 600", n, held, r.Last(), 600-dropped)
	}
	info := Stat(w.Path())
	if info.Messages != n || info.Last != 600 || info.LastTime.IsZero() || info.Unclean() {
		t.Errorf("Stat: %d messages, last %d, last time %v, unclean %v", info.Messages, info.Last, info.LastTime, info.Unclean())
	}
}

func TestRole(t *testing.T) {
	tests := []struct {
		name string
		meta Meta
		want string
	}{
		{"stdio proxy", Meta{Transport: "stdio"}, RoleProxy},
		{"reverse proxy", Meta{Transport: "http", Listen: "127.0.0.1:8700", Upstream: "http://x/acp"}, RoleProxyHTTP},
		{"serve", Meta{Transport: "http", Listen: "127.0.0.1:8700"}, RoleServe},
		{"connect over WebSocket", Meta{Transport: "ws", Upstream: "ws://x/acp"}, RoleConnect},
		{"replay", Meta{Transport: "replay", Notes: map[string]string{"replayOf": "a.acpscope"}}, RoleReplay},
		{"import of an export", Meta{Transport: "import", Notes: map[string]string{"exportedFrom": "a.acpscope"}}, RoleImport},
		{"export", Meta{Transport: "stdio", Notes: map[string]string{"exportedFrom": "a.acpscope"}}, RoleExport},
		{"old connect capture", Meta{Transport: "http", Argv: []string{"connect", "http://x/acp"}}, RoleConnect},
		{"nothing tells", Meta{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Role(tt.meta); got != tt.want {
				t.Errorf("Role = %q, want %q", got, tt.want)
			}
		})
	}
}
