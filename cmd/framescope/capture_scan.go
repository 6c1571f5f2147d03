package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/framescope/framescope/export/perfetto"
)

var errNotPerfetto = errors.New("not a Perfetto trace")

// scanPackets reads r to its end, gzip-compressed or not, and checks that
// it is a Perfetto trace's framing: field 1, length-delimited, again and
// again, no length over perfetto.MaxPacket, at most maxInput bytes in all
// after decompression. It holds no packet: a buffer and the gzip window
// are all it keeps, whatever r sends.
func scanPackets(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	lr := &limited{r: br, n: maxInput}
	in := bufio.NewReaderSize(lr, 64<<10)
	for n := 0; ; n++ {
		tag, err := in.ReadByte()
		if err == io.EOF {
			if n == 0 {
				return fmt.Errorf("%w: the answer is empty", errNotPerfetto)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if tag != 0x0a {
			return fmt.Errorf("%w: byte 0x%02x where packet %d should begin", errNotPerfetto, tag, n+1)
		}
		size, err := readUvarint(in)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errLongVarint) {
			return fmt.Errorf("%w: packet %d: %v", errNotPerfetto, n+1, err)
		}
		if err != nil {
			return fmt.Errorf("packet %d: %w", n+1, err)
		}
		if size > perfetto.MaxPacket {
			return fmt.Errorf("%w: packet %d of %d bytes, more than %d (perfetto.MaxPacket)", errTooLarge, n+1, size, perfetto.MaxPacket)
		}
		if m, err := in.Discard(int(size)); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("packet %d: %d of its %d bytes: %w", n+1, m, size, err)
		}
	}
}

// readUvarint reads a protobuf varint of at most 10 bytes.
func readUvarint(br *bufio.Reader) (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errLongVarint
}

var errLongVarint = errors.New("a length of more than 10 bytes")

// captureOutput is where capture writes: FILE's output, or, for standard
// output, a temporary file that is copied there once checked.
func captureOutput(path string) (*output, error) {
	if path != "-" {
		return createOutput(path)
	}
	f, err := os.CreateTemp("", "framescope-capture-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // nameless from now on: it goes with the process
	return &output{f: f}, nil
}

// copyTo copies the file written to w, from its start.
func (o *output) copyTo(w io.Writer) error {
	if _, err := o.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, o.f)
	return err
}
