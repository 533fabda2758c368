module github.com/acpscope/acpscope

go 1.26.8

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/gdamore/tcell/v2 v2.13.10
	github.com/gorilla/websocket v1.5.3
	github.com/rivo/tview v0.42.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/spf13/pflag v1.0.10
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	golang.org/x/text v0.43.0
)

require (
	github.com/gdamore/encoding v1.0.1 // indirect
	github.com/lucasb-eyer/go-colorful v1.3.0 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
)
