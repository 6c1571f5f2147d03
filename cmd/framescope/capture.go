package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "capture",
		summary: "save a trace from a running application's live view (/debug/framescope/)",
		run:     runCapture,
	})
}

// Limits of capture's flags: those of the live view's handler.
const (
	captureMaxFrames  = 3600
	captureMaxSeconds = 60
)

func runCapture(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	frames := fs.Int("frames", 0, "the last N settled frames (1 to 3600; the default, 60, when -seconds is not set)")
	seconds := fs.Int("seconds", 0, "the next S seconds instead (1 to 60)")
	out := fs.String("o", "framescope.perfetto-trace", "the file to write (- for standard output)")
	wait := fs.Duration("timeout", 0, "give up on the answer after this long (default: the seconds asked for, plus 30s)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope capture [-frames N | -seconds S] [-o FILE] URL")
		fmt.Fprintln(stderr, "URL is the application's live view (http://HOST:PORT/debug/framescope/, or just")
		fmt.Fprintln(stderr, "http://HOST:PORT, which it is then taken to be under). The trace is checked before")
		fmt.Fprintln(stderr, "FILE is written, and FILE is replaced only once written whole. Exit 1: the application")
		fmt.Fprintln(stderr, "could not be reached or refused (its answer is printed); 2: bad usage.")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "framescope capture: "+format+"\n", a...)
		return 2
	}
	switch {
	case len(pos) != 1:
		return usageErr("want one URL, got %d arguments", len(pos))
	case *frames != 0 && *seconds != 0:
		return usageErr("-frames or -seconds, not both")
	case *frames < 0 || *frames > captureMaxFrames:
		return usageErr("-frames %d: want 1 to %d", *frames, captureMaxFrames)
	case *seconds < 0 || *seconds > captureMaxSeconds:
		return usageErr("-seconds %d: want 1 to %d", *seconds, captureMaxSeconds)
	}
	u, err := traceURL(pos[0], *frames, *seconds)
	if err != nil {
		return usageErr("%v", err)
	}
	timeout := *wait
	if timeout == 0 {
		timeout = time.Duration(*seconds)*time.Second + 30*time.Second
	}
	client := &http.Client{Timeout: timeout}
	o, err := captureOutput(*out)
	if err != nil {
		return usageErr("%v", err)
	}
	t, err := fetchTrace(client, u, o.f)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("no whole answer within -timeout %v: %w", timeout, err)
	}
	if err == nil && *out == "-" {
		err = o.copyTo(stdout)
	}
	if err == nil && *out != "-" {
		err = o.commit()
	} else {
		o.abort()
	}
	if err != nil {
		fmt.Fprintf(stderr, "framescope capture: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "framescope capture: %s: %d frames, %d spans, %d dropped\n", *out, len(t.Frames), len(t.Spans), t.Drops.Total())
	return 0
}

// traceURL is the live view's trace endpoint under base.
func traceURL(base string, frames, seconds int) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q: want an http:// or https:// URL", base)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/debug/framescope") {
		p += "/debug/framescope"
	}
	u.Path = p + "/trace"
	q := url.Values{}
	if seconds > 0 {
		q.Set("seconds", strconv.Itoa(seconds))
	} else {
		if frames == 0 {
			frames = 60
		}
		q.Set("frames", strconv.Itoa(frames))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// fetchTrace gets u's body into f, at most maxInput bytes after
// decompression, checking as it comes that it is a Perfetto trace's
// sequence of packets, so that anything else (an endless or compressed
// body of something else, a packet over MaxPacket) fails at once, holding
// no more than a buffer. Once the body ended, it reads the trace back from
// f, whole: the check every framescope command makes. The error of a
// server's refusal carries its answer.
func fetchTrace(client *http.Client, u string, f *os.File) (*timeline.Trace, error) {
	r, err := client.Get(u)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(r.Body, 1024))
		return nil, fmt.Errorf("%s answered %s: %s", u, r.Status, strings.TrimSpace(string(msg)))
	}
	if r.ContentLength > maxInput {
		return nil, fmt.Errorf("%s: %w: its answer is %d bytes, over %d (the limit; %s raises it)", u, errTooLarge, r.ContentLength, maxInput, envMaxInput)
	}
	if err := scanPackets(io.TeeReader(r.Body, f)); err != nil {
		if errors.Is(err, errNotPerfetto) {
			return nil, fmt.Errorf("%s did not send a trace: %w", u, err)
		}
		return nil, fmt.Errorf("reading %s: %w", u, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	t, _, err := readTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s did not send a trace: %w", u, err)
	}
	return t, nil
}
