package inspector

import (
	"bufio"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/gdamore/tcell/v2"
)

// lineReader hands the lines a process writes to a channel.
func lineReader(r io.Reader) <-chan string {
	lines := make(chan string, 64)
	go func() { // ends at the process's EOF
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// answerTo waits for the agent's answer with id, failing on EOF or after
// waitLimit; other lines are skipped.
func answerTo(t *testing.T, lines <-chan string, id string) string {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the agent's output ended before the answer to id %s", id)
			}
			if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":`+id+`,`) {
				return l
			}
		case <-deadline:
			t.Fatalf("no answer to id %s within %v", id, waitLimit)
		}
	}
}

// heldAge matches a held list row whose age has grown past 0s.
var heldAge = regexp.MustCompile(`(?m)→ session/new .* [1-9][0-9]*s\s*[│║]?\s*$`)

// TestInterceptRealProxy holds, edits, forwards, drops, sends and
// releases messages of a real proxy process run with interception
// allowed, from the inspector on tcell's simulation screen, and checks
// what the agent answered and what the capture recorded.
func TestInterceptRealProxy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held"+capture.Ext)
	p := startProxy(t, path, envIntercept+"=1")
	lines := lineReader(p.fromAgent)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(p.toAgent, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	newSession := func(id, cwd string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}`
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	answerTo(t, lines, "1")

	t.Setenv("EDITOR", "sed -i s#/first#/edited#")
	h := startUI(t, Options{Path: path})
	h.resize(100, 30)
	h.waitFor("● live")
	h.typeKeys("i")
	h.waitFor("intercept: ")
	h.typeKeys("method:session/new kind:request")
	h.key(tcell.KeyEnter)
	h.waitFor("⏸ method:session/new")

	// Held, it shows in the table after the records, and Enter on it
	// opens the held list there. Edited, then forwarded: the agent
	// answers the edited request.
	send(newSession("2", "/first"))
	h.waitFor("1 held (h)")
	h.waitUntil("the held row in the table", func(s string) bool {
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "⏸") && strings.Contains(line, "held ") && strings.Contains(line, "session/new") {
				return true
			}
		}
		return false
	})
	h.key(tcell.KeyEnd)
	h.key(tcell.KeyDown)
	h.waitFor(`"cwd": "/first"`, "Enter or h: forward, edit or drop")
	h.key(tcell.KeyEnter)
	h.waitFor("1 held · intercepting", "→ session/new", `"cwd": "/first"`)
	h.waitUntil("the hold's age to grow while the list is open", func(s string) bool {
		return heldAge.MatchString(s)
	})
	h.typeKeys("e")
	answerTo(t, lines, "2")
	h.waitFor("0 held · intercepting")

	// Forwarded unchanged.
	send(newSession("3", "/second"))
	h.waitFor("1 held · intercepting", `"cwd": "/second"`)
	h.typeKeys("f")
	answerTo(t, lines, "3")

	// Dropped, after a confirmation: the agent never sees it.
	send(newSession("4", "/third"))
	h.waitFor("1 held · intercepting", `"cwd": "/third"`)
	h.typeKeys("x")
	h.waitFor("Drop held #")
	h.key(tcell.KeyTab) // from Cancel to Yes
	h.key(tcell.KeyEnter)
	h.waitFor("0 held · intercepting")

	// Back in the table: r resends the initialize request as it was.
	h.key(tcell.KeyEscape)
	h.waitFor("● live")
	h.typeKeys("f")
	h.typeKeys("method:initialize kind:request")
	h.key(tcell.KeyEnter)
	h.waitFor("→ client  request  id 1  initialize")
	h.typeKeys("r")
	h.waitUntil("the resend to be confirmed", func(s string) bool { return strings.Contains(s, "to the agent") && strings.Contains(s, "resent #") })
	answerTo(t, lines, "1")
	h.typeKeys("f")
	h.key(tcell.KeyCtrlU) // clear the filter
	h.key(tcell.KeyEnter)

	// S sends the template (the editor changes
	// nothing in it) toward the agent, a session/cancel.
	t.Setenv("EDITOR", "true")
	h.typeKeys("S")
	h.waitFor("sent ")

	// Quitting the inspector releases what it held, unchanged.
	send(newSession("5", "/fourth"))
	h.waitFor("1 held (h)")
	h.stop()
	answerTo(t, lines, "5")

	p.toAgent.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	if err := r.Scan(1, func(rec *capture.Record) bool {
		if f := rec.Fault; f != nil {
			body, _ := r.Body(rec.Seq)
			got = append(got, f.Action+" "+f.Stage+" "+f.By+" "+describeBody(body))
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"edit replaced intercept cwd=/first",
		"edit forwarded intercept cwd=/edited",
		"hold forwarded intercept cwd=/second",
		"drop dropped intercept cwd=/third",
		"send injected send initialize",
		"send injected send session/cancel",
		"hold forwarded intercept cwd=/fourth",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the capture recorded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// describeBody names a test message by its cwd or method.
func describeBody(body []byte) string {
	m := protocol.FromLine(0, 0, body)
	if i := strings.Index(string(body), `"cwd":"`); i >= 0 {
		rest := string(body[i+len(`"cwd":"`):])
		return "cwd=" + rest[:strings.IndexByte(rest, '"')]
	}
	return m.Method
}

// TestInterceptNeedsAllowedProxy: on a finished capture, or a live one
// whose proxy was not started with --allow-intercept, i and S say what
// is needed and hold nothing.
func TestInterceptNeedsAllowedProxy(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("i")
	h.waitFor("act on a live capture")

	path := filepath.Join(t.TempDir(), "plain"+capture.Ext)
	p := startProxy(t, path)
	live := startUI(t, Options{Path: path})
	live.resize(120, 30)
	live.waitFor("● live")
	live.typeKeys("S")
	live.waitFor("--allow-intercept")
	if strings.Contains(live.text(), "⏸") {
		t.Error("a proxy without interception shows as intercepting")
	}
	p.toAgent.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
}
