package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
)

// appendLimits adds what limits each frame of t, the trace at path read
// back whole, to the file (perfetto.AppendLimits): the layer streams its
// trace and cannot know a frame's limits as it writes it. It leaves a file
// that is not an uncompressed Perfetto trace, or that would grow past what
// framescope reads, as it is, and says why.
func appendLimits(path string, t *timeline.Trace) error {
	var add bytes.Buffer
	if err := perfetto.AppendLimits(&add, t); err != nil || add.Len() == 0 {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if format, err := sniff(bufio.NewReader(f)); err != nil || format != formatPerfetto {
		return fmt.Errorf("not an uncompressed Perfetto trace")
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Size()+int64(add.Len()) > maxInput {
		return fmt.Errorf("%d bytes more would take it past %d bytes, the limit of framescope's readers", add.Len(), maxInput)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		return err
	}
	return f.Close()
}

// limitsNote appends the frames' limits to a trace read back whole, and
// says so where it could not. A trace cut short gets none: what follows
// its cut would not read. Nor does the trace of a process that still runs
// (a child that outlived the program): it may write more at its own
// offset, over what was appended.
func limitsNote(w io.Writer, path string, pid int, t *timeline.Trace, cut *traceCut) {
	if cut != nil {
		return
	}
	if processAlive(pid) {
		fmt.Fprintf(w, "framescope run: the frames' limits are not in %s: process %d still runs and may write to it\n", path, pid)
		return
	}
	if err := appendLimits(path, t); err != nil {
		fmt.Fprintf(w, "framescope run: the frames' limits are not in the trace: %v\n", err)
	}
}
