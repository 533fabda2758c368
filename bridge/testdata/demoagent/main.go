// Command demoagent runs the built-in demo agent on stdin/stdout for the
// bridge package's end-to-end tests. With ACPSCOPE_TEE_DIR set it also
// appends every byte it reads to $ACPSCOPE_TEE_DIR/in.PID and every byte
// it writes to out.PID, so a test can byte-compare what the agent saw with
// what the client saw.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/acpscope/acpscope/internal/demo"
)

func main() {
	var in io.Reader = os.Stdin
	var out io.Writer = os.Stdout
	if dir := os.Getenv("ACPSCOPE_TEE_DIR"); dir != "" {
		pid := strconv.Itoa(os.Getpid())
		fin, err1 := os.Create(filepath.Join(dir, "in."+pid))
		fout, err2 := os.Create(filepath.Join(dir, "out."+pid))
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "demoagent:", err1, err2)
			os.Exit(1)
		}
		defer fin.Close()
		defer fout.Close()
		in = io.TeeReader(os.Stdin, fin)
		out = io.MultiWriter(fout, os.Stdout)
	}
	if err := demo.RunAgent(context.Background(), in, out, demo.AgentOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "demoagent:", err)
		os.Exit(1)
	}
}
