// Command peakrss runs a command and prints its peak resident set size, in
// KiB, as the last line of its standard error:
//
//	peakrss framescope capture URL
//	...
//	peakrss: 11520
//
// It exits with the command's status. A test that starts the command
// itself cannot measure it so: Go starts children with vfork, and the
// kernel counts the parent's memory, shared until the exec, in the
// child's peak (ru_maxrss). This launcher is small, so what it shares is.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "peakrss: %d\n", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}
