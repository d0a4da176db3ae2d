package testsupport

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// listeningPrefix starts the first line a standalone test server prints
// on standard output: "listening on ADDR".
const listeningPrefix = "listening on "

// Serve is the body of a standalone test server's main (the FerretDB
// and Meilisearch simulator commands). It catches SIGINT and SIGTERM,
// then calls start, which starts the server and returns the address it
// answers on and the function that stops it; it prints "listening on
// ADDR", waits for either signal and stops the server. The signals are
// caught before the server starts, so that a stop sent as soon as the
// line is read is not lost.
func Serve(start func() (addr string, stop func() error, err error)) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	addr, stop, err := start()
	if err != nil {
		return err
	}
	fmt.Printf("%s%s\n", listeningPrefix, addr)
	<-sig
	return stop()
}

// StartServer starts the standalone test server command bin (see Serve)
// with args and returns it with the address of its first line,
// "listening on ADDR", failing t when the line is not that. Unless the
// test has waited for the command, t's cleanup kills it and waits.
func StartServer(t testing.TB, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), listeningPrefix)
	if err != nil || !ok {
		t.Fatalf("%s: first line %q, %v; want %sADDR", bin, line, err, listeningPrefix)
	}
	return cmd, addr
}
