package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// tmpMark is in the name of every temporary file convert makes, so that a
// leftover can be told for what it is: ".OUT.framescope-tmp-RANDOM",
// beside OUT.
const tmpMark = ".framescope-tmp-"

// output is the file convert writes OUT through. It is written whole
// before it takes OUT's place, so a failure leaves OUT as it was.
//
// On Linux the file has no name while it is written (O_TMPFILE): a
// process killed then, even by SIGKILL, leaves nothing behind. Once
// written it is linked beside OUT under a temporary name and renamed over
// OUT. Where the file system has no O_TMPFILE, the file has that
// temporary name from the start; it is removed on failure and on SIGINT,
// SIGTERM or SIGHUP, so only a SIGKILL then leaves one.
type output struct {
	f    *os.File
	path string      // OUT
	mode fs.FileMode // OUT's permissions: those of the file it replaces, or 0644
	tmp  string      // the temporary name, once the file has one
	stop func()      // stops removing tmp on signals
}

// checkOutput returns the permissions OUT is to have: those of the
// regular file it replaces, or 0644 for a new one. Anything else at OUT (a
// directory, a symbolic link, a FIFO, a device, a socket) is refused:
// convert would otherwise replace it by a regular file.
func checkOutput(path string) (fs.FileMode, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0o644, nil
	case err != nil:
		return 0, err
	case !st.Mode().IsRegular():
		return 0, fmt.Errorf("%s is %s, not a regular file: convert replaces only regular files", path, modeName(st.Mode()))
	}
	return st.Mode().Perm(), nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// testNamedTemp makes createOutput take the path of file systems without
// O_TMPFILE.
var testNamedTemp bool

// createOutput opens the file to write OUT through.
func createOutput(path string) (*output, error) {
	mode, err := checkOutput(path)
	if err != nil {
		return nil, err
	}
	o := &output{path: path, mode: mode}
	dir := filepath.Dir(path)
	if f, err := openAnonymous(dir); err == nil && !testNamedTemp {
		o.f = f
	} else {
		f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tmpMark+"*")
		if err != nil {
			return nil, err
		}
		o.f, o.tmp = f, f.Name()
		o.stop = removeOnSignal(o.tmp)
	}
	// Set outright: the umask applied at creation.
	if err := o.f.Chmod(mode); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// commit puts the written file in OUT's place.
func (o *output) commit() error {
	if o.tmp == "" {
		tmp, err := linkAnonymous(o.f, filepath.Dir(o.path), "."+filepath.Base(o.path)+tmpMark)
		if err != nil {
			o.abort()
			return err
		}
		o.tmp = tmp
	}
	err := o.f.Close()
	if err == nil {
		// OUT may have changed since checkOutput: look again.
		_, err = checkOutput(o.path)
	}
	if err == nil {
		err = os.Rename(o.tmp, o.path)
	}
	if err != nil {
		os.Remove(o.tmp)
	}
	if o.stop != nil {
		o.stop()
	}
	return err
}

// abort drops the written file.
func (o *output) abort() {
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
	if o.stop != nil {
		o.stop()
	}
}

// removeOnSignal removes path if the process is interrupted, then lets the
// signal take its course. The returned func stops it.
func removeOnSignal(path string) func() {
	c := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(c, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-c:
			os.Remove(path)
			signal.Stop(c)
			// The signal again, now with its default action; where a
			// process cannot signal itself (Windows), exit as it would.
			if p, err := os.FindProcess(os.Getpid()); err != nil || p.Signal(sig) != nil {
				os.Exit(2)
			}
		case <-done:
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}
