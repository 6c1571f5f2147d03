package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnonymous opens a file without a name in dir (O_TMPFILE), for
// reading and writing.
func openAnonymous(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(anonymous)")), nil
}

// linkAnonymous gives the file f, opened by openAnonymous, a name in dir
// starting with prefix, and returns it.
func linkAnonymous(f *os.File, dir, prefix string) (string, error) {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for range 16 {
		var r [6]byte
		rand.Read(r[:])
		name := filepath.Join(dir, prefix+hex.EncodeToString(r[:]))
		err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return "", &os.LinkError{Op: "link", Old: src, New: name, Err: err}
		}
	}
	return "", errors.New("no free temporary name")
}
