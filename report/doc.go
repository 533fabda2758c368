// Package report writes a capture as one self-contained HTML file, the
// bug report that opens anywhere: from file://, offline, with no network
// and nothing but the file. It shows the session's header (the agent and
// client, the protocol version, capabilities, modes and configuration
// options), the conversation protocol.BuildTranscript rebuilds, the lint
// findings linked to their messages, a sequence diagram drawn as SVG, a
// timeline of requests and their answers, and a filterable table of every
// message with its JSON.
//
// The records come through capture's Exporter, so the report is redacted
// exactly as every other export is. Bodies over a size are folded: the
// file holds their size and their beginning, not the whole. The table and
// the timeline draw only the rows in view, so ten thousand messages open
// as fast as ten.
//
// The page is html/template, one stylesheet and one script of our own,
// embedded with the binary; the script builds the table from a JSON
// document in the page and never fetches anything (the page's content
// security policy forbids it).
//
// # Concurrency
//
// Write runs on its caller's goroutine; capture's Exporter, which it
// drives, owns the goroutines that read and redact.
package report
