// Package inspector is acpscope's terminal user interface: a library of
// captures grouped under connections and ACP sessions, a message table
// that reads rows from the store on demand, a detail pane with pretty
// JSON, raw bytes and the paired message, a conversation view rebuilt from
// session/update, statistics, lint findings, the filter bar (the language
// of capture.ParseFilter), counted search, go to a message, marks, follow
// mode for live captures, and a status bar that says which of these is on.
// It reads records from capture and asks protocol what they mean; it
// knows nothing of transports.
//
// # Concurrency
//
// tview runs every handler and draw on its own goroutine (the UI
// goroutine), and every view's state belongs to it. Work that reads many
// records (filters, statistics, the transcript, the library's session
// listing, search) runs on a worker goroutine that owns nothing shown: it
// builds its result, then hands it over with Application.QueueUpdateDraw.
// The bodies behind the table's rows (a session/update's variant, the
// start of a line that is not JSON-RPC) are read the same way, by each
// capture view's row decorator, never by the UI goroutine.
// Handlers never call QueueUpdateDraw (tview would deadlock); they start
// workers instead. Each worker is tied to a job whose cancel channel the
// UI closes when the result is no longer wanted (a new filter typed, the
// view closed, the application stopped), so no worker outlives the run.
// A live capture's updates are read by one follower goroutine that turns
// bursts of arrivals into at most one redraw per tick (100 ms). While the
// library is shown, one watcher goroutine lists its directory every 2 s
// (or when R asks) and posts the list when it changed; opening a capture
// or quitting stops it.
package inspector
