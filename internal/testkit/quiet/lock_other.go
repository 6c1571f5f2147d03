//go:build !unix

package quiet

import "os"

// lock does nothing where flock is not: the tests it keeps apart run on
// Linux.
func lock(*os.File) error { return nil }
