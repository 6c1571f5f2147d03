//go:build unix

package history

import (
	"io/fs"
	"os"
	"syscall"
)

// ownsFile reports whether files SQLite makes beside the file st
// describes will be its owner's: this process is the owner, or root
// (SQLite gives them to the owner then).
func ownsFile(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return !ok || os.Geteuid() == 0 || int(sys.Uid) == os.Geteuid()
}
