package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

func TestReadForeign(t *testing.T) {
	tests := []struct {
		name, in      string
		spans, tracks int
		flows         int
		unmatched     uint64
		wantErr       string
	}{
		{"array X", `[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":2,"name":"b"}]`, 2, 1, 0, 0, ""},
		{"array no close", `[{"ph":"B","pid":1,"tid":2,"ts":1,"name":"a"},{"ph":"E","pid":1,"tid":2,"ts":3}`, 1, 1, 0, 0, ""},
		{"thread names", `[{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"render"}},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"}]`, 1, 1, 0, 0, ""},
		{"string tid", `{"traceEvents":[{"ph":"B","pid":"p","tid":"worker","ts":1,"name":"a"},{"ph":"E","pid":"p","tid":"worker","ts":2}]}`, 1, 1, 0, 0, ""},
		{"flow", `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"a"},{"ph":"s","id":7,"pid":1,"tid":1,"ts":2},{"ph":"X","pid":1,"tid":2,"ts":10,"dur":5,"name":"b"},{"ph":"f","bp":"e","id":7,"pid":1,"tid":2,"ts":11}]`, 2, 2, 1, 0, ""},
		{"unmatched", `[{"ph":"E","pid":1,"tid":1,"ts":1},{"ph":"B","pid":1,"tid":1,"ts":2,"name":"open"}]`, 0, 1, 0, 2, ""},
		{"overlapping X", `[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":10,"name":"b"},{"ph":"X","pid":1,"tid":1,"ts":10,"dur":0,"name":"c"}]`, 2, 1, 0, 0, ""},
		{"E inside X", `[{"ph":"B","pid":1,"tid":1,"ts":0,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"x"},{"ph":"E","pid":1,"tid":1,"ts":5},{"ph":"E","pid":1,"tid":1,"ts":20}]`, 2, 1, 0, 1, ""},
		{"counter", `[{"ph":"C","pid":1,"name":"mem","ts":1,"args":{"heap":5,"stack":2}}]`, 0, 2, 0, 0, ""},
		{"other phases", `{"traceEvents":[{"ph":"i","ts":1,"name":"x"},{"ph":"P"},{"ph":"longer"}],"metadata":{"a":[1,2]}}`, 0, 0, 0, 0, ""},
		{"empty object", `{}`, 0, 0, 0, 0, "no traceEvents"},
		{"garbage", `hello`, 0, 0, 0, 0, "invalid character"},
		{"number", `42`, 0, 0, 0, 0, "starts with"},
		{"truncated object", `{"traceEvents":[{"ph":"B","pid":1`, 0, 0, 0, 0, "unexpected EOF"},
		{"bad ts", `[{"ph":"B","pid":1,"tid":1,"ts":"soon","name":"a"}]`, 0, 0, 0, 0, "ts"},
		{"negative dur", `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":-1,"name":"a"}]`, 0, 0, 0, 0, "dur"},
		{"bad track meta", `[{"ph":"M","name":"framescope_track","pid":1,"tid":1,"args":{"id":0,"kind":"cpu"}}]`, 0, 0, 0, 0, "bad track"},
		{"events not array", `{"traceEvents":5}`, 0, 0, 0, 0, "not an array"},
		// Errors in the input's terms, not encoding/json's Go types.
		{"event a number", `[1,2]`, 0, 0, 0, 0, "event 0: a JSON number, not an object"},
		{"ph a number", `[{"ph":5}]`, 0, 0, 0, 0, `event 0: "ph" is a JSON number, not a string`},
		{"track id a string", `[{"ph":"M","name":"framescope_track","pid":1,"tid":1,"args":{"id":"x","kind":"cpu"}}]`, 0, 0, 0, 0, `framescope_track args: "id" is a JSON string, not an integer`},
		{"frame args an array", `[{"ph":"M","name":"framescope_frame","pid":1,"args":[1]}]`, 0, 0, 0, 0, "framescope_frame args: a JSON array, not an object"},
		{"deep", `[` + strings.Repeat(`{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},`, 5000) + `{"ph":"i"}]`, 0, 0, 0, 0, "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "unmarshal") {
					t.Errorf("error %q speaks of Go's types", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Spans) != tc.spans || len(got.Tracks) != tc.tracks || len(got.Flows) != tc.flows || got.Drops.Unended != tc.unmatched {
				t.Fatalf("got %d spans, %d tracks, %d flows, %d unmatched: %+v", len(got.Spans), len(got.Tracks), len(got.Flows), got.Drops.Unended, got)
			}
		})
	}
}

func TestReadThreadName(t *testing.T) {
	tr, err := Read(strings.NewReader(`[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"render"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Tracks) != 1 || tr.Tracks[0].Name != "render" || tr.Tracks[0].Kind != timeline.TrackCPU {
		t.Fatalf("tracks %+v", tr.Tracks)
	}
}

func TestReadLimits(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleTrace(4, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLimited(bytes.NewReader(buf.Bytes()), Limits{MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxBytes: %v", err)
	}
	if _, err := ReadLimited(bytes.NewReader(buf.Bytes()), Limits{MaxEvents: 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxEvents: %v", err)
	}
	if _, err := ReadLimited(io.MultiReader(bytes.NewReader(buf.Bytes())), Limits{}); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

// FuzzRead checks that no input makes Read panic, and that whatever it
// accepts can be written and read back to the same trace.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, sampleTrace(5, 2))
	f.Add(buf.Bytes())
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":2,"name":"b"}]`))
	buf.Reset()
	Write(&buf, tracecases.WorkTrace())
	f.Add(buf.Bytes())
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a","args":{"clipping_primitives":18446744073709551615,"work_stats":"clipping_primitives"}},` +
		`{"ph":"B","pid":1,"tid":2,"ts":2,"name":"b","args":{"work_missing":"frames","work_stats":"compute_shader_invocations+vertex_shader_invocations"}},{"ph":"E","pid":1,"tid":2,"ts":3}]`))
	f.Add([]byte(`[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},{"ph":"s","id":"x","pid":1,"tid":1,"ts":1},{"ph":"f","id":"x","bp":"e","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":2}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"C","pid":1,"name":"c","ts":1e3,"args":{"v":1.5}}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"M","name":"framescope_track","pid":1,"tid":3,"args":{"id":3,"kind":"gpu-queue","name":"q"}}]}`))
	// Found by fuzzing: a slice never ended around a child; two counters
	// of one name.
	f.Add([]byte(`[{"ph":"B","pid":0,"tid":0,"ts":0,"name":""},{"ph":"B","pid":0,"tid":0,"ts":0,"name":""},{"ph":"E","pid":0,"tid":0,"ts":0}]`))
	f.Add([]byte(`[{"ph":"M","name":"framescope_track","args":{"id":5,"kind":"counter","name":"c"}},{"ph":"M","name":"framescope_track","args":{"id":6,"kind":"counter","name":"c"}},{"ph":"C","name":"c","ts":1,"args":{"value":1}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadLimited(bytes.NewReader(data), Limits{MaxBytes: 1 << 20, MaxEvents: 1 << 14})
		if err != nil {
			if tr != nil && (!errors.Is(err, io.ErrUnexpectedEOF) || tr.Validate() != nil) {
				t.Fatalf("a trace returned with error %v breaks the model: %v", err, tr.Validate())
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("Read returned a trace that breaks the model: %v", err)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		if err := w.WriteBatch(tr); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.Invalid() != (Invalid{}) {
			t.Fatalf("the writer refused parts of a valid trace: %+v", w.Invalid())
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("invalid JSON written")
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		back.Process, tr.Process = timeline.Process{}, timeline.Process{}
		if g, w := fmt.Sprintf("%+v", canon(back)), fmt.Sprintf("%+v", canon(tr)); g != w {
			t.Fatalf("round trip changed the trace:\ngot  %.2000s\nwant %.2000s", g, w)
		}
	})
}
