package interop

// The Go SDK's example programs are built from the module cache by the
// tests; importing the SDK here keeps the module required in go.mod.
import _ "github.com/coder/acp-go-sdk"
