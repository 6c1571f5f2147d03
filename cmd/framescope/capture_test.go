package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
)

// liveStub answers as the live view's trace endpoint would: a trace, or
// what the test asks for.
func liveStub(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	return srv.URL
}

func smallTrace(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	tr := &timeline.Trace{Names: []string{"", "frame"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}},
		Spans:  []timeline.Span{{Track: 1, Name: 1, Start: 1000, End: 2000, Frame: 1}},
		Frames: []timeline.Frame{{ID: 1, Start: 1000, End: 2000}}}
	if err := perfetto.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCapture(t *testing.T) {
	body := smallTrace(t)
	var asked []string
	base := liveStub(t, func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.String())
		w.Write(body)
	})
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string // the request the server saw
	}{
		{[]string{base}, "/debug/framescope/trace?frames=60"},
		{[]string{"-frames", "7", base + "/debug/framescope/"}, "/debug/framescope/trace?frames=7"},
		{[]string{"-seconds", "2", base + "/app/debug/framescope"}, "/app/debug/framescope/trace?seconds=2"},
	} {
		out := filepath.Join(dir, "t.perfetto-trace")
		os.Remove(out)
		var so, se bytes.Buffer
		if rc := run(append([]string{"capture", "-o", out}, c.args...), &so, &se); rc != 0 {
			t.Fatalf("%v: rc %d: %s", c.args, rc, se.String())
		}
		if got := asked[len(asked)-1]; got != c.want {
			t.Errorf("%v: asked %s, want %s", c.args, got, c.want)
		}
		if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, body) {
			t.Errorf("%v: file %d bytes, %v", c.args, len(b), err)
		}
		if !strings.Contains(se.String(), "1 frames, 1 spans, 0 dropped") {
			t.Errorf("%v: summary %q", c.args, se.String())
		}
	}
}

// -o - writes the trace to standard output, once checked.
func TestCaptureToStdout(t *testing.T) {
	body := smallTrace(t)
	base := liveStub(t, func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	var so, se bytes.Buffer
	if rc := run([]string{"capture", "-o", "-", base}, &so, &se); rc != 0 {
		t.Fatalf("rc %d: %s", rc, se.String())
	}
	if !bytes.Equal(so.Bytes(), body) {
		t.Errorf("stdout has %d bytes, want the %d sent", so.Len(), len(body))
	}
	so.Reset()
	bad := liveStub(t, func(w http.ResponseWriter, r *http.Request) { w.Write(append(body, 0)) })
	if rc := run([]string{"capture", "-o", "-", bad}, &so, &se); rc != 1 || so.Len() != 0 {
		t.Errorf("a trace with a stray byte: rc %d, %d bytes on stdout; want 1 and none", rc, so.Len())
	}
}

// What goes wrong leaves FILE as it was, says why, and exits 1 (the
// application) or 2 (the command line).
func TestCaptureFails(t *testing.T) {
	body := smallTrace(t)
	for _, c := range []struct {
		name   string
		args   []string
		answer func(w http.ResponseWriter, r *http.Request)
		rc     int
		stderr string
	}{
		{"refused", nil, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "live: 4 captures are running (Options.MaxCaptures)", http.StatusTooManyRequests)
		}, 1, "4 captures are running"},
		{"bad request", nil, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "live: frames=\"5000\": want an integer from 1 to 300", http.StatusBadRequest)
		}, 1, "want an integer from 1 to 300"},
		{"not a trace", nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) }, 1, "did not send a trace"},
		{"cut short", nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write(body)
		}, 1, "reading"},
		{"both", []string{"-frames", "3", "-seconds", "3"}, nil, 2, "not both"},
		{"frames over", []string{"-frames", "3601"}, nil, 2, "want 1 to 3600"},
		{"seconds over", []string{"-seconds", "61"}, nil, 2, "want 1 to 60"},
		{"negative", []string{"-frames", "-1"}, nil, 2, "want 1 to 3600"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := "http://127.0.0.1:1"
			if c.answer != nil {
				base = liveStub(t, c.answer)
			}
			out := filepath.Join(t.TempDir(), "keep.perfetto-trace")
			os.WriteFile(out, []byte("old"), 0o644)
			var so, se bytes.Buffer
			rc := run(append(append([]string{"capture", "-o", out}, c.args...), base), &so, &se)
			if rc != c.rc || !strings.Contains(se.String(), c.stderr) {
				t.Errorf("rc %d, stderr %q; want %d, %q", rc, se.String(), c.rc, c.stderr)
			}
			if b, _ := os.ReadFile(out); string(b) != "old" {
				t.Errorf("FILE changed: %q", b)
			}
		})
	}
	var so, se bytes.Buffer
	if rc := run([]string{"capture", "ftp://x"}, &so, &se); rc != 2 {
		t.Errorf("ftp URL: rc %d", rc)
	}
	if rc := run([]string{"capture"}, &so, &se); rc != 2 {
		t.Errorf("no URL: rc %d", rc)
	}
}
