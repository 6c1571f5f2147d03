package tpcheck

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed tp.mjs
var harness string

// requestTimeout bounds one load or query; a processor that takes longer is
// killed, and the next request starts a fresh one.
const requestTimeout = 5 * time.Minute

// Result is the answer to one query: column names and rows of values. A
// value is nil (NULL), int64, float64, string or []byte.
type Result struct {
	Columns []string
	Rows    [][]any
}

// Maps returns the rows as maps from column name to value.
func (r Result) Maps() []map[string]any {
	out := make([]map[string]any, len(r.Rows))
	for i, row := range r.Rows {
		m := make(map[string]any, len(r.Columns))
		for j, c := range r.Columns {
			if j < len(row) {
				m[c] = row[j]
			}
		}
		out[i] = m
	}
	return out
}

// nodeEngine runs tp.mjs in one long-lived Node process.
type nodeEngine struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *tail
	done   chan struct{} // closed when the process has exited
	err    error         // set when the process is unusable
}

func startNode(p processor) (*nodeEngine, error) {
	cmd := exec.Command(p.node, "--input-type=module", "--eval", harness)
	if p.kind == "shell" {
		cmd.Env = append(os.Environ(), "TPCHECK_SHELL="+p.path)
	} else {
		cmd.Env = append(os.Environ(), "TPCHECK_DIR="+p.path)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	e := &nodeEngine{cmd: cmd, stdin: stdin, lines: make(chan []byte, 1), stderr: &tail{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			e.lines <- line
		}
		close(e.lines)
		cmd.Wait()
		close(e.done)
	}()
	return e, nil
}

// request sends one JSON request and decodes the one-line answer into out.
func (e *nodeEngine) request(req map[string]string, out any) error {
	if e.err != nil {
		return e.err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := e.stdin.Write(append(b, '\n')); err != nil {
		e.fail(fmt.Errorf("writing to the trace processor: %w", err))
		return e.err
	}
	timer := time.NewTimer(requestTimeout)
	defer timer.Stop()
	select {
	case line, ok := <-e.lines:
		if !ok {
			<-e.done
			e.fail(fmt.Errorf("trace processor exited (%v); stderr:\n%s", e.cmd.ProcessState, e.stderr))
			return e.err
		}
		if err := decodeLine(line, out); err != nil {
			e.fail(fmt.Errorf("bad answer from the trace processor: %w: %.200q", err, line))
			return e.err
		}
		return nil
	case <-timer.C:
		e.fail(fmt.Errorf("trace processor gave no answer in %v", requestTimeout))
		return e.err
	}
}

// decodeLine decodes one JSON answer, keeping numbers exact.
func decodeLine(line []byte, out any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	return d.Decode(out)
}

// fail marks the engine unusable and stops its process.
func (e *nodeEngine) fail(err error) {
	if e.err == nil {
		e.err = err
	}
	e.close()
}

func (e *nodeEngine) close() {
	e.stdin.Close()
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		e.cmd.Process.Kill()
		<-e.done
	}
}

type answer struct {
	OK      bool     `json:"ok"`
	Error   string   `json:"error"`
	Fatal   string   `json:"fatal"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

func (e *nodeEngine) do(req map[string]string) (answer, error) {
	var a answer
	if err := e.request(req, &a); err != nil {
		return a, err
	}
	if a.Fatal != "" {
		e.fail(fmt.Errorf("trace processor failed to start: %s", a.Fatal))
		return a, e.err
	}
	if a.Error != "" {
		return a, errors.New(a.Error)
	}
	return a, nil
}

func (e *nodeEngine) load(path string) error {
	_, err := e.do(map[string]string{"op": "load", "path": path})
	return err
}

func (e *nodeEngine) query(sql string) (Result, error) {
	a, err := e.do(map[string]string{"op": "query", "sql": sql})
	if err != nil {
		return Result{}, err
	}
	res := Result{Columns: a.Columns, Rows: a.Rows}
	for _, row := range res.Rows {
		for i, v := range row {
			row[i], err = cell(v)
			if err != nil {
				return Result{}, err
			}
		}
	}
	return res, nil
}

// cell turns a decoded JSON cell into nil, int64, float64, string or []byte.
func cell(v any) (any, error) {
	switch v := v.(type) {
	case nil, string:
		return v, nil
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			return strconv.ParseInt(s, 10, 64)
		}
		return strconv.ParseFloat(s, 64)
	case map[string]any:
		if b, ok := v["blob"].(string); ok {
			return base64.StdEncoding.DecodeString(b)
		}
		if b, ok := v["str"].(string); ok { // a string that is not UTF-8
			s, err := base64.StdEncoding.DecodeString(b)
			return string(s), err
		}
	}
	return nil, fmt.Errorf("unexpected cell %v", v)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
