//go:build !unix

package history

import "io/fs"

// ownsFile reports whether files SQLite makes beside the file st
// describes will be its owner's: where files have no owning user, they
// are anyone's.
func ownsFile(st fs.FileInfo) bool { return true }
