package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// historyJSON is the shape of show -json: what its readers decode.
// writeHistoryJSON writes it a value at a time, as json.Encoder with
// SetIndent("", "  ") writes the whole.
type historyJSON struct {
	Testbed string              `json:"testbed"`
	Branch  string              `json:"branch"`
	Commits []historyCommitJSON `json:"commits"`
	Series  []historySeriesJSON `json:"series"`
}

type historyCommitJSON struct {
	SHA  string   `json:"commit"`
	Seq  int64    `json:"seq"`
	Runs []string `json:"runs"`
}

type historySeriesJSON struct {
	Kind   string             `json:"kind"`
	Track  string             `json:"track"`
	Name   string             `json:"name"`
	Metric string             `json:"metric"`
	Values []historyValueJSON `json:"values"`
}

type historyValueJSON struct {
	Commit int     `json:"commit"` // index into commits
	Run    int     `json:"run"`    // index into the commit's runs
	Value  float64 `json:"value"`
	// Whole is an exact count, as text: it may pass 2^53.
	Whole string `json:"whole,omitempty"`
}

// writeHistoryJSON writes h to stdout as a historyJSON, byte for byte as
// json.Encoder with SetIndent("", "  ") writes one, but streamed: each
// commit, and each series a value at a time, through a buffer, so that
// what it holds beyond h does not grow with h (a copy of a history of
// 10,000 commits of 1,000 series, encoded whole, took gigabytes).
func writeHistoryJSON(stdout, stderr io.Writer, testbed, branch string, h history.History) int {
	w := bufio.NewWriter(stdout)
	err := streamHistoryJSON(w, testbed, branch, h)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "framescope history show: %s\n", termText(err.Error()))
		return exitBadInput
	}
	return 0
}

// streamHistoryJSON writes h to w as writeHistoryJSON says; an error is
// w's.
func streamHistoryJSON(w *bufio.Writer, testbed, branch string, h history.History) error {
	fmt.Fprintf(w, "{\n  \"testbed\": %s,\n  \"branch\": %s,\n  \"commits\": ", jsonText(testbed), jsonText(branch))
	err := jsonArray(w, len(h.Commits), 1, func(i int) error {
		c := historyCommitJSON{SHA: h.Commits[i].SHA, Seq: h.Commits[i].Seq, Runs: h.Runs[i]}
		b, err := json.MarshalIndent(c, "    ", "  ")
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	})
	if err != nil {
		return err
	}
	w.WriteString(",\n  \"series\": ")
	if err := jsonArray(w, len(h.Series), 1, func(i int) error { return seriesJSON(w, h.Series[i]) }); err != nil {
		return err
	}
	_, err = w.WriteString("\n}\n")
	return err
}

// jsonArray writes an array of n elements at depth d, as encoding/json
// indents one: "[]" where n is 0, else each element on a line of its own
// at depth d+1, and "]" at d. elem writes element i from its first line's
// indent on.
func jsonArray(w *bufio.Writer, n, d int, elem func(i int) error) error {
	if n == 0 {
		_, err := w.WriteString("[]")
		return err
	}
	w.WriteString("[")
	in := "\n" + strings.Repeat("  ", d+1)
	for i := range n {
		if i > 0 {
			w.WriteString(",")
		}
		w.WriteString(in)
		if err := elem(i); err != nil {
			return err
		}
	}
	_, err := w.WriteString("\n" + strings.Repeat("  ", d) + "]")
	return err
}

// seriesJSON writes s as an element of "series", a historySeriesJSON,
// its values one at a time.
func seriesJSON(w *bufio.Writer, s history.Series) error {
	const in = "\n      "
	fmt.Fprintf(w, "{"+in+`"kind": %s,`+in+`"track": %s,`+in+`"name": %s,`+in+`"metric": %s,`+in+`"values": `,
		jsonText(s.Key.Kind), jsonText(s.Key.Track), jsonText(s.Key.Name), jsonText(s.Key.Metric))
	if len(s.Values) == 0 {
		w.WriteString("null") // as historySeriesJSON's Values, appended none
	} else {
		var b []byte
		err := jsonArray(w, len(s.Values), 3, func(i int) error {
			b = appendValueJSON(b[:0], s.Values[i])
			_, err := w.Write(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	_, err := w.WriteString("\n    }")
	return err
}

// appendValueJSON appends v as an element of "values", a
// historyValueJSON: a value that is not finite as 0 (Add refuses them),
// a whole count as text.
func appendValueJSON(b []byte, v history.Value) []byte {
	const in = "\n          "
	b = append(b, "{"+in+`"commit": `...)
	b = strconv.AppendInt(b, int64(v.Commit), 10)
	b = append(b, ","+in+`"run": `...)
	b = strconv.AppendInt(b, int64(v.Run), 10)
	b = append(b, ","+in+`"value": `...)
	x := v.Value
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	b = appendJSONFloat(b, x)
	if v.IsWhole {
		b = append(b, ","+in+`"whole": "`...)
		b = strconv.AppendUint(b, v.Whole, 10)
		b = append(b, '"')
	}
	return append(b, "\n        }"...)
}

// appendJSONFloat appends f as encoding/json writes a float64: as
// ECMAScript writes a number, the shortest decimal that reads back as f,
// with an exponent below 1e-6 and from 1e21 on (1e-7, not 1e-07).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// jsonText is s as a JSON string, as encoding/json writes it: '<', '>'
// and '&' escaped, a byte that is not UTF-8 as U+FFFD.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}
