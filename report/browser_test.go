package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeReport renders the report of a fixture of n records to a file and
// returns its file:// URL.
func writeReport(t *testing.T, n, big int) string {
	t.Helper()
	page := render(t, open(t, fixture(t, n, big)), Options{})
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// shots is where TestReportInBrowser saves screenshots when
// ACPSCOPE_REPORT_SHOTS names a directory.
func shot(t *testing.T, b *browser, name string) {
	if dir := os.Getenv("ACPSCOPE_REPORT_SHOTS"); dir != "" {
		b.screenshot(t, filepath.Join(dir, name+".png"))
	}
}

// TestReportInBrowser opens a report in headless Chromium from file://
// and uses it as a reader would: the conversation and the table are
// drawn, the filter narrows the rows, a click on a row shows its JSON, a
// link in the conversation opens its message; nothing is logged as an
// error and nothing is fetched.
func TestReportInBrowser(t *testing.T) {
	b := startBrowser(t)
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	b.open(t, writeReport(t, 400, 100<<10))
	shot(t, b, "top")
	b.eval(t, `document.querySelector(".diff").scrollIntoView({block: "center"})`, nil)
	shot(t, b, "diff")

	var n int
	b.eval(t, `document.querySelectorAll("#conversation .item").length`, &n)
	if n < 8 {
		t.Errorf("the conversation shows %d items", n)
	}
	var text string
	b.eval(t, `document.getElementById("conversation").innerText`, &text)
	for _, want := range []string{"Fix the greeting in main.go", "I will read main.go first.", "Edit main.go", "hello, ACP"} {
		if !strings.Contains(text, want) {
			t.Errorf("the conversation does not show %q", want)
		}
	}

	var rows struct{ Drawn, Total int }
	b.eval(t, `({Drawn: document.querySelectorAll("#table .r").length, Total: JSON.parse(document.getElementById("acpscope-data").textContent).rows.length})`, &rows)
	if rows.Drawn == 0 || rows.Drawn >= rows.Total {
		t.Errorf("the table draws %d of %d rows: want some, and only those in view", rows.Drawn, rows.Total)
	}

	b.typeText(t, "#filter", "session/prompt")
	b.waitFor(t, "the filter to narrow the rows", `(c => parseInt(c) < parseInt(c.split(" of ")[1]))(document.getElementById("count").textContent)`)
	var methods []string
	b.eval(t, `[...document.querySelectorAll("#table .r")].map(r => r.children[4].textContent)`, &methods)
	if len(methods) == 0 {
		t.Fatal("no rows match session/prompt")
	}
	for _, m := range methods {
		if m != "session/prompt" {
			t.Errorf("the filtered table shows a %q row", m)
		}
	}
	shot(t, b, "filtered")

	b.click(t, "#table .r")
	b.waitFor(t, "the detail pane to show the row's JSON", `document.querySelector("#detail pre.json")`)
	b.eval(t, `document.querySelector("#detail").innerText`, &text)
	if !strings.Contains(text, `"method": "session/prompt"`) || !strings.Contains(text, "answered by #") {
		t.Errorf("the detail pane shows:\n%s", text)
	}
	var selected int
	b.eval(t, `document.querySelectorAll("#table .r.sel").length`, &selected)
	if selected != 1 {
		t.Errorf("%d rows are marked selected", selected)
	}
	shot(t, b, "detail")

	b.click(t, `#conversation .item.permission a.seq`)
	b.waitFor(t, "a conversation link to open its message", `document.querySelector("#detail h3").textContent.includes("session/request_permission")`)
	b.eval(t, `document.getElementById("count").textContent`, &text)
	if f := strings.Fields(text); len(f) < 3 || f[0] != f[2] {
		t.Errorf("opening a filtered-out message should clear the filter; the count says %q", text)
	}

	b.click(t, `#timeline-list .r`)
	b.waitFor(t, "a timeline bar to open its request", `document.querySelector("#detail h3").textContent.includes("request")`)
	b.click(t, `svg.seq a.arrow`)
	b.waitFor(t, "a diagram arrow to open its message", `document.querySelector("#detail h3").textContent.startsWith("#1 ")`)
	shot(t, b, "sequence")

	for _, p := range b.problems() {
		t.Errorf("the page: %s", p)
	}
}

// TestLargeReportInBrowser: a report of 10,000 messages opens and draws
// only the rows in view. How long it took is logged, not judged (the
// machine is shared); README gives the figure.
func TestLargeReportInBrowser(t *testing.T) {
	b := startBrowser(t)
	url := writeReport(t, 10000, 0)
	b.open(t, url)
	var ready float64
	b.eval(t, `window.acpscopeReadyAt`, &ready)
	var nav float64
	b.eval(t, `performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd`, &nav)
	t.Logf("10,000 messages: the report was ready %.0f ms after navigation began (DOM loaded at %.0f ms)", ready, nav)
	var drawn int
	b.eval(t, `document.querySelectorAll("#table .r").length`, &drawn)
	if drawn == 0 || drawn > 200 {
		t.Errorf("%d rows drawn of 10,000: want only those in view", drawn)
	}
	var count string
	b.eval(t, `document.getElementById("count").textContent`, &count)
	if !strings.HasPrefix(count, "10000 of 10000") {
		t.Errorf("count %q", count)
	}
	for _, p := range b.problems() {
		t.Errorf("the page: %s", p)
	}
	if raw, _ := os.ReadFile(strings.TrimPrefix(url, "file://")); bytes.Count(raw, []byte(`"s":`)) != 10000 {
		t.Errorf("the report holds %d rows", bytes.Count(raw, []byte(`"s":`)))
	}
}
