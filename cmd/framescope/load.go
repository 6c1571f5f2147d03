package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// Limits of what framescope reads, so that every command on any input
// ends within about 1 GiB of memory (docs/hostile-inputs.md measures it):
// a huge file, a deep one or a gzip bomb fails with an error naming the
// limit instead of filling memory. The environment variables raise them,
// for a machine with the memory.
var (
	// maxInput bounds the bytes of a trace, counted after decompression
	// as they are read, never buffered first.
	maxInput int64 = 1 << 30
	// maxSpans bounds the spans (Perfetto slices) of a trace, and
	// 2*maxSpans its Chrome JSON events.
	maxSpans = 4 << 20
)

const (
	envMaxInput = "FRAMESCOPE_MAX_INPUT_BYTES"
	envMaxSpans = "FRAMESCOPE_MAX_SPANS"
)

func init() {
	if v, err := strconv.ParseInt(os.Getenv(envMaxInput), 10, 64); err == nil && v > 0 {
		maxInput = v
	}
	if v, err := strconv.Atoi(os.Getenv(envMaxSpans)); err == nil && v > 0 {
		maxSpans = v
	}
}

// traceFormat is a trace encoding that framescope reads or writes.
type traceFormat int

const (
	formatUnknown traceFormat = iota
	formatPerfetto
	formatChrome
	formatPprof
)

func (f traceFormat) String() string {
	switch f {
	case formatPerfetto:
		return "perfetto"
	case formatChrome:
		return "chrome"
	case formatPprof:
		return "pprof"
	}
	return "unknown"
}

var errTooLarge = errors.New("input too large")

// limited fails with errTooLarge once more than n bytes were read.
type limited struct {
	r io.Reader
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("%w: over %d bytes after decompression (the limit; %s raises it)", errTooLarge, maxInput, envMaxInput)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// sniff tells the format of a trace from its first bytes: JSON starts with
// '{' or '[' after optional whitespace (and byte order mark); a Perfetto
// trace with the tag of field 1, length-delimited (0x0a), then the
// packet's length. As 0x0a is also a newline, and a length may be the
// byte of '{' or '[', input that starts with it is protobuf if its first
// bytes are well-formed packets, else JSON if whitespace then '{' or '['
// follow.
func sniff(br *bufio.Reader) (traceFormat, error) {
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	first, err := br.Peek(1)
	if err != nil {
		if err == io.EOF {
			return formatUnknown, errors.New("empty file")
		}
		return formatUnknown, err
	}
	if first[0] == 0x0a && looksLikePprof(br) {
		return formatPprof, errors.New("a pprof profile: framescope writes pprof but reads only Perfetto and Chrome JSON traces")
	}
	if b, _ := br.Peek(sniffBytes); first[0] == 0x0a && packets(b, len(b) == sniffBytes) {
		return formatPerfetto, nil
	}
scan:
	for i := 0; i < sniffBytes; i++ {
		b, err := br.Peek(i + 1)
		if err != nil {
			break
		}
		switch b[i] {
		case ' ', '\t', '\r', '\n':
		case '{', '[':
			return formatChrome, nil
		default:
			break scan
		}
	}
	if b, _ := br.Peek(sniffBytes); len(bytes.TrimLeft(b, " \t\r\n")) == 0 {
		return formatUnknown, errors.New("only whitespace")
	}
	return formatUnknown, fmt.Errorf("not a Perfetto or Chrome JSON trace (starts with byte 0x%02x)", first[0])
}

// sniffBytes is how much of the input sniff looks at.
const sniffBytes = 4096

// packets reports whether b, the start of the input, is well-formed
// protobuf: records of field 1, length-delimited, each body a run of
// fields without groups. The last record may be cut off by the end of b
// if the input goes on (more) or is a protobuf cut short: one record at
// least was whole.
func packets(b []byte, more bool) bool {
	for whole := false; len(b) > 0; whole = true {
		more = more || whole
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return false
		}
		l, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			return more && len(b) < n+binary.MaxVarintLen64
		}
		body := b[n+m:]
		if uint64(len(body)) < l {
			return more && wellFormed(body, true)
		}
		if !wellFormed(body[:l], false) {
			return false
		}
		b = body[l:]
	}
	return true
}

// wellFormed reports whether b is a run of protobuf fields without groups;
// with cut, b may end inside the last one.
func wellFormed(b []byte, cut bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return cut && protowire.ParseError(n) == io.ErrUnexpectedEOF
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return cut && protowire.ParseError(m) == io.ErrUnexpectedEOF
		}
		b = b[n+m:]
	}
	return true
}

// looksLikePprof reports whether the message that starts the input is a
// pprof ValueType (sample_type, field 1): only varint fields 1 and 2. A
// Perfetto TracePacket has neither field.
func looksLikePprof(br *bufio.Reader) bool {
	b, _ := br.Peek(64)
	if len(b) < 2 || b[0] != 0x0a || b[1] == 0 || b[1] >= 0x80 || int(b[1])+2 > len(b) {
		return false
	}
	body := b[2 : 2+int(b[1])]
	for len(body) > 0 {
		if tag := body[0]; tag != 0x08 && tag != 0x10 {
			return false
		}
		body = body[1:]
		n := 0
		for n < len(body) && body[n] >= 0x80 {
			n++
		}
		if n == len(body) {
			return false
		}
		body = body[n+1:]
	}
	return true
}

// readTrace reads a Perfetto or Chrome JSON trace, gzip-compressed or not,
// telling them apart by content.
func readTrace(r io.Reader) (*timeline.Trace, traceFormat, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, formatUnknown, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	lr := &limited{r: br, n: maxInput}
	br = bufio.NewReaderSize(lr, 64<<10)
	f, err := sniff(br)
	if err != nil {
		return nil, f, err
	}
	var t *timeline.Trace
	switch f {
	case formatChrome:
		t, err = chrome.ReadLimited(br, chrome.Limits{MaxBytes: maxInput, MaxEvents: 2 * maxSpans})
	case formatPerfetto:
		t, err = perfetto.ReadLimited(br, perfetto.Limits{MaxBytes: maxInput, MaxSpans: maxSpans})
	}
	if (errors.Is(err, chrome.ErrTooLarge) || errors.Is(err, perfetto.ErrTooLarge)) && !strings.Contains(err.Error(), "MaxDepth") && !strings.Contains(err.Error(), "MaxPacket") {
		err = fmt.Errorf("%w (%s and %s raise framescope's limits of %d bytes and %d spans)", err, envMaxInput, envMaxSpans, maxInput, maxSpans)
	}
	var cut *perfetto.CutError
	if errors.As(err, &cut) {
		return t, f, cut // a trace cut short reads back: see traceCut
	}
	if err != nil {
		return nil, f, fmt.Errorf("%v trace: %w", f, err)
	}
	return t, f, nil
}

// traceCut says that a trace was cut short (a writer killed mid-write, a
// full disk) and how much of it reads back: every command reads such a
// trace up to its last whole batch and says so, in its text and JSON.
// What the cut part held is unknown, so it is counted nowhere.
type traceCut struct {
	Path string `json:"path"`
	// Bytes is the size of the trace (decompressed); ReadBytes how much
	// of it reads back, up to the end of its last whole batch (or, in a
	// trace that does not mark its batches, packet).
	Bytes     int64  `json:"bytes"`
	ReadBytes int64  `json:"read_bytes"`
	LostBytes int64  `json:"unread_bytes"`
	Batches   uint64 `json:"whole_batches"`
	UpTo      string `json:"up_to"` // "batch" or "packet"
	LastFrame uint64 `json:"last_frame"`
}

func cutOf(path string, c *perfetto.CutError) *traceCut {
	if c == nil {
		return nil
	}
	t := &traceCut{Path: path, Bytes: c.Size, ReadBytes: c.Read, LostBytes: c.Size - c.Read, Batches: c.Batches, UpTo: "packet", LastFrame: c.Frame}
	if c.Marked {
		t.UpTo = "batch"
	}
	return t
}

// String is the cut in a line, its path as it is.
func (c *traceCut) String() string { return c.phrase().String() }

// phrase is the cut in a line, the path a name.
func (c *traceCut) phrase() phrase {
	what := "a packet in progress"
	upTo := "its last whole packet"
	if c.UpTo == "batch" {
		what = "a batch in progress"
		upTo = fmt.Sprintf("its last whole batch (%d batches)", c.Batches)
	}
	p := phrasef("%s: the trace was cut short at byte %d: the last %d bytes (%s, its content unknown) are not read; it reads back %d bytes, up to %s",
		untrusted(c.Path), c.Bytes, c.LostBytes, what, c.ReadBytes, upTo)
	if c.LastFrame != 0 {
		p = phrasef("%s, to frame %d", p, c.LastFrame)
	}
	return p
}

// loadTrace reads the whole trace at path: a trace cut short is an error
// saying how much reads back (loadTraceCut reads it).
func loadTrace(path string) (*timeline.Trace, error) {
	t, cut, err := loadTraceCut(path)
	if cut != nil {
		return nil, errors.New(cut.String())
	}
	return t, err
}

// loadTraceCut reads the trace at path ("-" for standard input), and says
// whether it was cut short (nil if whole).
func loadTraceCut(path string) (*timeline.Trace, *traceCut, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, nil, fmt.Errorf("%s is a directory", path)
		}
		r = f
	}
	t, _, err := readTrace(r)
	var cut *perfetto.CutError
	if errors.As(err, &cut) {
		return t, cutOf(path, cut), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil, nil
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, which it returns.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
