package tpcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// writeFile writes a trace into the test's temp dir.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodJSON = `{"traceEvents":[
 {"ph":"M","name":"process_name","pid":7,"args":{"name":"app"}},
 {"ph":"X","name":"outer","ts":1.000,"dur":2.000,"pid":7,"tid":7},
 {"ph":"X","name":"inner ü \"q\"","ts":1.500,"dur":0.250,"pid":7,"tid":7},
 {"ph":"C","name":"mem","ts":1.0,"pid":7,"args":{"v":1.5}}]}`

func TestQueryValues(t *testing.T) {
	s := Check(t, writeFile(t, "good.json", goodJSON))
	tests := []struct {
		sql  string
		want [][]any
	}{
		{"select name, ts, dur, depth from slice order by ts",
			[][]any{{"outer", int64(1000), int64(2000), int64(0)}, {`inner ü "q"`, int64(1500), int64(250), int64(1)}}},
		{"select value from counter", [][]any{{1.5}}},
		{"select 9007199254740993 as big, -1 as neg", [][]any{{int64(9007199254740993), int64(-1)}}},
		{"select 2.0 as f, null as n, x'00ff' as b, '' as e", [][]any{{2.0, nil, []byte{0, 0xff}, ""}}},
		{"select cast(x'61ff62' as text) as s, 'é' as u", [][]any{{"a\xffb", "é"}}},
		{"select 1 as x where 0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			r, err := s.Result(tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Rows) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(r.Rows, tt.want) {
				t.Errorf("got %#v, want %#v", r.Rows, tt.want)
			}
		})
	}
	if _, err := s.Query("select no_such_column from slice"); err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Errorf("bad SQL: got error %v, want one naming the column", err)
	}
	m := s.MustQuery("select name from process where pid = 7")
	if len(m) != 1 || m[0]["name"] != "app" {
		t.Errorf("process: got %v", m)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheckReportsStats(t *testing.T) {
	// An end event with no begin: the JSON importer counts an error.
	bad := writeFile(t, "bad.json", `{"traceEvents":[{"ph":"E","name":"a","ts":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":1.5,"pid":1,"tid":1}]}`)
	rec := &recorder{TB: t}
	Check(rec, bad)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "json_parser_failure") {
		t.Errorf("Check on a bad trace reported %q, want the json_parser_failure stat", rec.errors)
	}
}

func TestSessionsInterleave(t *testing.T) {
	a := Load(t, writeFile(t, "a.json", `{"traceEvents":[{"ph":"X","name":"A","ts":1,"dur":1,"pid":1,"tid":1}]}`))
	b := Load(t, writeFile(t, "b.json", `{"traceEvents":[{"ph":"X","name":"B","ts":1,"dur":1,"pid":1,"tid":1}]}`))
	for i, c := range []struct {
		s    *Session
		want string
	}{{a, "A"}, {b, "B"}, {a, "A"}} {
		rows := c.s.MustQuery("select name from slice")
		if len(rows) != 1 || rows[0]["name"] != c.want {
			t.Errorf("query %d: got %v, want one slice %s", i, rows, c.want)
		}
	}
}

func TestLocate(t *testing.T) {
	empty := t.TempDir()
	notExec := writeFile(t, "tp", "")
	tests := []struct {
		name, env string
		wantErr   string
	}{
		{"missing dir", filepath.Join(empty, "nope"), "no such file"},
		{"incomplete dir", empty, "incomplete trace processor directory"},
		{"not executable", notExec, "not executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, tt.env)
			_, err := locate()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("locate with %s=%s: got %v, want an error containing %q", EnvDir, tt.env, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), errNotFound.Error()) {
				t.Errorf("a named but unusable processor must not read as not found (a skip): %v", err)
			}
		})
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`1`, int64(1)},
		{`-9223372036854775808`, int64(-9223372036854775808)},
		{`1.0`, 1.0},
		{`1e300`, 1e300},
		{`"x"`, "x"},
		{`null`, nil},
		{`{"blob":"AQI="}`, []byte{1, 2}},
		{`{"str":"/w=="}`, "\xff"},
	}
	for _, tt := range tests {
		var a answer
		if err := decodeLine([]byte(`{"rows":[[`+tt.in+`]]}`), &a); err != nil {
			t.Fatal(err)
		}
		got, err := cell(a.Rows[0][0])
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("cell(%s) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
	if _, err := cell(map[string]any{"x": 1}); err == nil {
		t.Error("cell of an unknown object: want an error")
	}
}

// TestShellRelay drives the shell path (trace_processor_shell --stdiod)
// with a stand-in: tp.mjs in relay mode, which speaks the shell's RPC on
// stdin and stdout through the wasm engine.
func TestShellRelay(t *testing.T) {
	p, err := locate()
	if err != nil || p.kind != "wasm" {
		t.Skipf("needs the WebAssembly trace processor: %v", err)
	}
	script, err := filepath.Abs("tp.mjs")
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "trace_processor_shell")
	body := fmt.Sprintf("#!/bin/sh\nTPCHECK_RELAY=1 TPCHECK_DIR=%q exec %q %q\n", p.path, p.node, script)
	if err := os.WriteFile(fake, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, fake)
	sp, err := locate()
	if err != nil || sp.kind != "shell" {
		t.Fatalf("locate with %s=%s: %v, %v", EnvDir, fake, sp, err)
	}
	e, err := startNode(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	if err := e.load(writeFile(t, "good.json", goodJSON)); err != nil {
		t.Fatal(err)
	}
	r, err := e.query("select count(*) as n from slice")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Rows, [][]any{{int64(2)}}) {
		t.Errorf("got %v, want 2 slices", r.Rows)
	}
}
