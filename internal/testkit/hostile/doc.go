// Package hostile makes the inputs of docs/hostile-inputs.md: traces that
// are small, or small once compressed, but deep, wide, made of tiny or
// huge packets, or of nothing at all, to check that every reader and
// exporter ends in a result or a clear error, in bounded time and memory.
//
// Every generator streams to an io.Writer, so a gigabyte of input costs
// the generator no memory. The command internal/cmd/hostiletable runs them
// through the framescope command and writes the table.
package hostile
