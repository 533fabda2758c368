package peer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

type acpMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// acp is a minimal ACP agent: enough of initialize, session/new and
// session/prompt for a client to hold a conversation through the proxy.
// Each prompt gets two agent_message_chunk updates, then end_turn.
func acp(stdin io.Reader, stdout, stderr io.Writer) int {
	r := bufio.NewReaderSize(stdin, 64<<10)
	sessions := 0
	for {
		line, err := r.ReadBytes('\n') // no size limit, unlike bufio.Scanner
		if len(bytes.TrimSpace(line)) > 0 {
			var m acpMessage
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				fmt.Fprintf(stderr, "testagent: ignoring a line that is not JSON: %v\n", jerr)
			} else if werr := answer(stdout, m, &sessions); werr != nil {
				return 1
			}
		}
		if err != nil {
			return 0
		}
	}
}

func answer(w io.Writer, m acpMessage, sessions *int) error {
	if m.ID == nil || m.Method == "" {
		return nil // a notification or a response: nothing to say
	}
	switch m.Method {
	case "initialize":
		return reply(w, m.ID, `{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[]}`)
	case "session/new":
		*sessions++
		return reply(w, m.ID, `{"sessionId":"sess-`+strconv.Itoa(*sessions)+`"}`)
	case "session/prompt":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &p)
		sid, _ := json.Marshal(p.SessionID)
		for _, text := range []string{"Hello", ", world"} {
			note := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
				`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}` + "\n"
			if _, err := io.WriteString(w, note); err != nil {
				return err
			}
		}
		return reply(w, m.ID, `{"stopReason":"end_turn"}`)
	}
	_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", m.ID)
	return err
}

func reply(w io.Writer, id json.RawMessage, result string) error {
	_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	return err
}
