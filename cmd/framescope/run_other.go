//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

// terminalForeground: no terminal signals a process group here.
func terminalForeground() bool { return false }
