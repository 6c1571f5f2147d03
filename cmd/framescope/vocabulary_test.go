//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// snake turns a Go field name into its key: QueryLimit -> query_limit,
// GPUSpans -> gpu_spans.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Every loss cause has one name: the field of timeline.Drops, its key in
// every trace format, in framescope stats (text and JSON), in the live
// view's JSON, and in profiler.Stats, which holds a Drops and no field of
// its own for any cause. The list of causes is the type's, so a cause
// added later is checked without a change here.
func TestLossVocabulary(t *testing.T) {
	dt := reflect.TypeFor[timeline.Drops]()
	if dt.NumField() != int(books.NumCauses) {
		t.Fatalf("Drops has %d fields and %d causes", dt.NumField(), books.NumCauses)
	}
	var d timeline.Drops
	causes := map[string]bool{}
	for c := range books.NumCauses {
		f := dt.Field(int(c))
		causes[f.Name] = true
		if key := c.String(); key != snake(f.Name) {
			t.Errorf("cause %d: key %q, field %s", c, key, f.Name)
		}
		if back, ok := books.CauseOf(c.String()); !ok || back != c {
			t.Errorf("books.CauseOf(%q) = %d, %v", c.String(), back, ok)
		}
		*books.Count(&d, c) = uint64(100 + c) // distinct, so that a swap shows
		if got := reflect.ValueOf(d).Field(int(c)).Uint(); got != uint64(100+c) {
			t.Errorf("Count(%s) is not the field %s", c, f.Name)
		}
	}
	// Drops.Total sums the losses as books counts them: every cause but
	// misuse.
	var losses uint64
	for c := range books.NumCauses {
		if c.Loss() {
			losses += *books.Count(&d, c)
		}
	}
	if d.Total() != losses {
		t.Errorf("Drops.Total() = %d, the causes that are losses sum to %d", d.Total(), losses)
	}

	// Stats: the context's and the recorder's carry a Drops, and name no
	// cause again.
	for _, st := range []reflect.Type{reflect.TypeFor[profiler.Stats](), reflect.TypeFor[record.Stats]()} {
		f, ok := st.FieldByName("Drops")
		if !ok || f.Type != dt {
			t.Errorf("%s has no Drops field of type timeline.Drops", st)
		}
		for i := range st.NumField() {
			// A count (not a breakdown by kind, as record.Stats.Evicted).
			if f := st.Field(i); causes[f.Name] && f.Type.Kind() == reflect.Uint64 {
				t.Errorf("%s.%s counts a cause again, beside Drops", st, f.Name)
			}
		}
	}

	tr := &timeline.Trace{Names: []string{"", "z"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q"}},
		Spans: []timeline.Span{{Track: 1, Name: 1, Start: 10, End: 20}}, Drops: d}
	dir := t.TempDir()
	comments := strings.Join(pprof.Build(tr).Comments, "\n")
	for c := range books.NumCauses {
		if want := fmt.Sprintf("%s %d", c, 100+int(c)); !strings.Contains(comments, want) {
			t.Errorf("pprof: the comments lack %q: %s", want, comments)
		}
	}
	for _, f := range []traceFormat{formatPerfetto, formatChrome} {
		path := writeFile(t, dir, "t."+f.String(), tr, f, false)
		raw := mustRead(t, path)
		for c := range books.NumCauses {
			want := c.String() // Perfetto: a counter track's field, its value checked by Read below
			if f == formatChrome {
				want = fmt.Sprintf(`"%s":%d`, c, 100+int(c))
			}
			if !bytes.Contains(raw, []byte(want)) {
				t.Errorf("%s: the file lacks %q", f, want)
			}
		}
		// framescope stats, text and JSON.
		code, out, errOut := runCLI("stats", path)
		if code != 0 {
			t.Fatalf("%s: stats: exit %d: %s", f, code, errOut)
		}
		code, js, _ := runCLI("stats", "--json", path)
		if code != 0 {
			t.Fatalf("%s: stats --json: exit %d", f, code)
		}
		var r struct {
			Drops map[string]uint64 `json:"drops"`
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatalf("%s: stats --json: %v", f, err)
		}
		for c := range books.NumCauses {
			key, n := c.String(), uint64(100+int(c))
			if !strings.Contains(out, fmt.Sprintf("%s %d", key, n)) {
				t.Errorf("%s: framescope stats lacks %q:\n%s", f, fmt.Sprintf("%s %d", key, n), out)
			}
			if r.Drops[key] != n {
				t.Errorf("%s: stats --json drops[%q] = %d, want %d", f, key, r.Drops[key], n)
			}
		}
	}
	// The readers restore every count.
	for name, read := range map[string]func([]byte) (*timeline.Trace, error){
		"perfetto": func(b []byte) (*timeline.Trace, error) { return perfetto.Read(bytes.NewReader(b)) },
		"chrome":   func(b []byte) (*timeline.Trace, error) { return chrome.Read(bytes.NewReader(b)) },
	} {
		var buf bytes.Buffer
		var err error
		if name == "perfetto" {
			err = perfetto.Write(&buf, tr)
		} else {
			err = chrome.Write(&buf, tr)
		}
		if err != nil {
			t.Fatal(err)
		}
		back, err := read(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if back.Drops != d {
			t.Errorf("%s: read back %+v, want %+v", name, back.Drops, d)
		}
	}
	// The live view's JSON has every key.
	p := profiler.New(profiler.Options{})
	defer p.Close()
	rec := httptest.NewRecorder()
	live.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/framescope/json", nil))
	var v struct {
		Drops map[string]uint64 `json:"drops"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("live json: %v: %s", err, rec.Body.String())
	}
	for c := range books.NumCauses {
		if _, ok := v.Drops[c.String()]; !ok || len(v.Drops) != int(books.NumCauses) {
			t.Errorf("live view drops %v lack %q or have others", v.Drops, c.String())
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
