package report

// A small Chrome DevTools Protocol client, enough to drive headless
// Chromium through a report: navigate, evaluate, type, click, and hear
// what the page logs and what it tries to fetch.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// cdpWait bounds every wait on the browser: generous, the machines the
// tests run on are shared and busy.
const cdpWait = 90 * time.Second

// chromiumFlags are the flags every run uses: headless, no sandbox (the
// tests may run as root), nothing that reaches the network on its own.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
	"--disable-default-apps", "--disable-extensions", "--remote-debugging-port=0",
}

// findChromium returns Debian's chromium, or skips the test where it is
// missing.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): the report's browser test needs it")
	return ""
}

// browser is a running Chromium and a CDP connection to its page.
type browser struct {
	cmd  *exec.Cmd
	conn *websocket.Conn

	mu      sync.Mutex
	next    int64
	pending map[int64]chan cdpReply
	events  []cdpEvent
	done    chan struct{} // closed when the reader goroutine ends
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type cdpEvent struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://[^\s]+)`)

// startBrowser starts Chromium on about:blank with a fresh profile and
// connects to its page. Cleanup closes the connection and ends the
// browser.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := findChromium(t)
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "about:blank")
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	b := &browser{cmd: cmd, pending: map[int64]chan cdpReply{}, done: make(chan struct{})}
	t.Cleanup(b.close)
	found := make(chan string, 1)
	go func() { // the stderr reader: finds the DevTools address, then drains
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-time.After(cdpWait):
		t.Fatal("chromium did not say where DevTools listen")
	}
	page, err := pageTarget(wsURL)
	if err != nil {
		t.Fatal(err)
	}
	b.conn, _, err = websocket.DefaultDialer.Dial(page, nil)
	if err != nil {
		t.Fatalf("connecting to the page: %v", err)
	}
	go b.read()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		b.call(t, m, nil)
	}
	return b
}

// pageTarget asks the browser's HTTP endpoint for its page's socket.
func pageTarget(browserWS string) (string, error) {
	host := strings.TrimPrefix(browserWS, "ws://")
	host = host[:strings.IndexByte(host, '/')]
	deadline := time.Now().Add(cdpWait)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			var targets []struct {
				Type string `json:"type"`
				WS   string `json:"webSocketDebuggerUrl"`
			}
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" && err == nil {
					return tg.WS, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", errors.New("chromium has no page target")
}

// read is the connection's one reader: replies go to their callers,
// events are kept for the test to look at.
func (b *browser) read() {
	defer close(b.done)
	for {
		_, data, err := b.conn.ReadMessage()
		if err != nil {
			return
		}
		var msg struct {
			ID int64 `json:"id"`
			cdpReply
			cdpEvent
		}
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		b.mu.Lock()
		if msg.ID != 0 {
			if c := b.pending[msg.ID]; c != nil {
				c <- msg.cdpReply
				delete(b.pending, msg.ID)
			}
		} else {
			b.events = append(b.events, msg.cdpEvent)
		}
		b.mu.Unlock()
	}
}

// call sends a command and waits for its result.
func (b *browser) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	c := make(chan cdpReply, 1)
	b.pending[id] = c
	b.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := b.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case r := <-c:
		if r.Error != nil {
			t.Fatalf("%s: %s", method, r.Error.Message)
		}
		return r.Result
	case <-b.done:
		t.Fatalf("%s: the browser went away", method)
	case <-time.After(cdpWait):
		t.Fatalf("%s: no answer in %v", method, cdpWait)
	}
	return nil
}

// eval evaluates a JavaScript expression in the page and decodes its
// value into out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.tryEval(t, expr, out); err != nil {
		t.Fatal(err)
	}
}

// tryEval is eval that returns the page's exception as an error.
func (b *browser) tryEval(t *testing.T, expr string, out any) error {
	t.Helper()
	res := b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("evaluating %s: %v", expr, err)
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluating %s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			return fmt.Errorf("evaluating %s: %v (value %s)", expr, err, r.Result.Value)
		}
	}
	return nil
}

// waitFor polls a JavaScript condition until it holds. While a page
// loads, evaluating may fail; that counts as not yet.
func (b *browser) waitFor(t *testing.T, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(cdpWait)
	for {
		var ok bool
		err := b.tryEval(t, "!!("+cond+")", &ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s (%s): %v", cdpWait, what, cond, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// open navigates to url and waits for the report's script to finish.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.call(t, "Page.navigate", map[string]any{"url": url})
	b.waitFor(t, "the report to be ready", `document.documentElement.dataset.ready === "1"`)
}

// click presses and releases the left button on the centre of the first
// element matching selector, as a user's click does.
func (b *browser) click(t *testing.T, selector string) {
	t.Helper()
	var at struct{ X, Y float64 }
	b.eval(t, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, selector), &at)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		b.call(t, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1})
	}
}

// typeText focuses the element matching selector and types text into it.
func (b *browser) typeText(t *testing.T, selector, text string) {
	t.Helper()
	b.eval(t, fmt.Sprintf(`document.querySelector(%q).focus()`, selector), nil)
	b.call(t, "Input.insertText", map[string]any{"text": text})
}

// screenshot saves the page as a PNG (to look at the report by eye).
func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	res := b.call(t, "Page.captureScreenshot", map[string]any{"format": "png"})
	var r struct {
		Data []byte `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, r.Data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// problems lists what the page logged as an error, threw, or fetched
// from anywhere but the file itself.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		var p struct {
			Type  string `json:"type"`
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
			Exception struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
			Args []struct {
				Value any `json:"value"`
			} `json:"args"`
		}
		json.Unmarshal(e.Params, &p)
		switch {
		case e.Method == "Runtime.exceptionThrown":
			out = append(out, "exception: "+p.Exception.Text+" "+p.Exception.Exception.Description)
		case e.Method == "Runtime.consoleAPICalled" && (p.Type == "error" || p.Type == "assert" || p.Type == "warning"):
			out = append(out, fmt.Sprintf("console.%s %v", p.Type, p.Args))
		case e.Method == "Log.entryAdded" && (p.Entry.Level == "error" || p.Entry.Level == "warning"):
			out = append(out, "log: "+p.Entry.Text+" "+p.Entry.URL)
		case e.Method == "Network.requestWillBeSent" && !strings.HasPrefix(p.Request.URL, "file://") && !strings.HasPrefix(p.Request.URL, "about:"):
			out = append(out, "fetched "+p.Request.URL)
		}
	}
	return out
}

// close ends the connection and the browser with its helper processes
// (its process group, which it leads), and waits for them.
func (b *browser) close() {
	if b.conn != nil {
		b.conn.Close()
		<-b.done
	}
	if p := b.cmd.Process; p != nil {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		b.cmd.Wait()
	}
}
