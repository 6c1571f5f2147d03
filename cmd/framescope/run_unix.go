//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminalForeground reports whether framescope's process group is the
// foreground group of its controlling terminal: the group a Ctrl-C at
// that terminal signals.
func terminalForeground() bool {
	tty, err := os.OpenFile("/dev/tty", os.O_RDONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer tty.Close()
	pg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// processAlive reports whether process pid exists (signal 0 reaches it,
// or it is another user's).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
