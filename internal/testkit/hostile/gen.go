package hostile

import (
	"bufio"
	"compress/gzip"
	"io"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// PerfettoSlices writes a Perfetto trace of n slices on one track, in
// runs of depth nested slices (depth 1: side by side), each begin and end
// a packet of its own, as small as the format allows (about 9 bytes).
// Names are left out unless named: then every slice has a name of its
// own ("s0", "s1", ...).
func PerfettoSlices(w io.Writer, n, depth int, named bool) error {
	return perfettoSlices(w, n, depth, named, true)
}

// PerfettoBomb is PerfettoSlices with every slice at the same time and
// without names: every packet is alike, so the trace compresses about a
// thousandfold.
func PerfettoBomb(w io.Writer, n, depth int) error {
	return perfettoSlices(w, n, depth, false, false)
}

func perfettoSlices(w io.Writer, n, depth int, named, tick bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	desc := protowire.AppendTag(nil, 1, protowire.VarintType) // uuid
	desc = protowire.AppendVarint(desc, 1)
	desc = protowire.AppendTag(desc, 2, protowire.BytesType) // name
	desc = protowire.AppendString(desc, "hostile")
	pkt := protowire.AppendTag(nil, 60, protowire.BytesType) // track_descriptor
	pkt = protowire.AppendBytes(pkt, desc)
	bw.Write(packet(nil, pkt))
	depth = max(depth, 1)
	ts := uint64(1)
	var buf, ev []byte
	event := func(typ uint64, name string) {
		ev = protowire.AppendTag(ev[:0], 9, protowire.VarintType) // type
		ev = protowire.AppendVarint(ev, typ)
		ev = protowire.AppendTag(ev, 11, protowire.VarintType) // track_uuid
		ev = protowire.AppendVarint(ev, 1)
		if name != "" {
			ev = protowire.AppendTag(ev, 23, protowire.BytesType)
			ev = protowire.AppendString(ev, name)
		}
		p := protowire.AppendTag(buf[:0], 8, protowire.VarintType) // timestamp
		p = protowire.AppendVarint(p, ts)
		p = protowire.AppendTag(p, 11, protowire.BytesType) // track_event
		p = protowire.AppendBytes(p, ev)
		buf = p
		bw.Write(packet(nil, p))
		if tick {
			ts++
		}
	}
	for done := 0; done < n; {
		k := min(depth, n-done)
		for i := range k {
			name := ""
			if named {
				name = "s" + strconv.Itoa(done+i)
			}
			event(1, name) // TYPE_SLICE_BEGIN
		}
		for range k {
			event(2, "") // TYPE_SLICE_END
		}
		done += k
	}
	return bw.Flush()
}

// PerfettoHugePacket writes one packet of size bytes: a track descriptor
// whose name is that long.
func PerfettoHugePacket(w io.Writer, size int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	hdr := protowire.AppendTag(nil, 1, protowire.BytesType)
	// descriptor { uuid 1, name (size) }
	desc := protowire.AppendTag(nil, 1, protowire.VarintType)
	desc = protowire.AppendVarint(desc, 1)
	desc = protowire.AppendTag(desc, 2, protowire.BytesType)
	desc = protowire.AppendVarint(desc, uint64(size))
	pktLen := len(desc) + size
	p := protowire.AppendTag(nil, 60, protowire.BytesType)
	p = protowire.AppendVarint(p, uint64(pktLen))
	hdr = protowire.AppendVarint(hdr, uint64(len(p)+pktLen))
	bw.Write(hdr)
	bw.Write(p)
	bw.Write(desc)
	if err := repeat(bw, 'x', size); err != nil {
		return err
	}
	return bw.Flush()
}

func packet(dst, body []byte) []byte {
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendBytes(dst, body)
}

// ChromeSlices writes a Chrome JSON trace of n slices on one thread, in
// runs of depth nested B/E slices (depth 1: side by side).
func ChromeSlices(w io.Writer, n, depth int) error { return chromeSlices(w, n, depth, true) }

// ChromeBomb is ChromeSlices with every event at the same time and of the
// same name: it compresses about a thousandfold.
func ChromeBomb(w io.Writer, n, depth int) error { return chromeSlices(w, n, depth, false) }

func chromeSlices(w io.Writer, n, depth int, vary bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("[")
	depth = max(depth, 1)
	ts := 0
	sep := ""
	for done := 0; done < n; {
		k := min(depth, n-done)
		for i := range k {
			name := "z"
			if vary {
				name += strconv.Itoa(i % 100)
			}
			bw.WriteString(sep + `{"ph":"B","pid":1,"tid":1,"ts":` + strconv.Itoa(ts) + `,"name":"` + name + `"}`)
			sep = ",\n"
			if vary {
				ts++
			}
		}
		for range k {
			bw.WriteString(sep + `{"ph":"E","pid":1,"tid":1,"ts":` + strconv.Itoa(ts) + `}`)
			if vary {
				ts++
			}
		}
		done += k
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// Zeros writes n zero bytes.
func Zeros(w io.Writer, n int) error { return repeat(w, 0, n) }

func repeat(w io.Writer, c byte, n int) error {
	buf := make([]byte, 1<<16)
	for i := range buf {
		buf[i] = c
	}
	for n > 0 {
		k := min(n, len(buf))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Gzip writes what gen writes, gzip-compressed at the best ratio: a bomb
// when gen's output repeats.
func Gzip(w io.Writer, gen func(io.Writer) error) error {
	return GzipLevel(w, gzip.BestCompression, gen)
}

// GzipLevel is Gzip at a compression level of compress/gzip.
func GzipLevel(w io.Writer, level int, gen func(io.Writer) error) error {
	zw, err := gzip.NewWriterLevel(w, level)
	if err != nil {
		return err
	}
	if err := gen(zw); err != nil {
		return err
	}
	return zw.Close()
}

// Spaces writes n spaces.
func Spaces(w io.Writer, n int) error { return repeat(w, ' ', n) }
