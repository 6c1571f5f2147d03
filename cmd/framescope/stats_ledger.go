package main

import (
	"fmt"
	"strings"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// bookJSON is one book of a trace's ledger for --json, with what the
// trace itself holds of it and the losses by cause.
type bookJSON struct {
	Issued    uint64    `json:"issued"`
	Delivered uint64    `json:"delivered"`
	InTrace   int       `json:"in_trace"`
	Open      uint64    `json:"open"`
	Lost      dropsJSON `json:"lost"`
	Balanced  bool      `json:"balanced"`
}

// ledgerJSON is a trace's books, by their keys; absent from a trace
// that has none.
type ledgerJSON map[string]bookJSON

func ledgerOf(t *timeline.Trace) ledgerJSON {
	if (t.Ledger == timeline.Ledger{}) {
		return nil
	}
	kinds := trackKinds(t)
	var in [books.NumKinds]int
	for _, s := range t.Spans {
		switch kinds[s.Track] {
		case "gpu":
			in[books.ZoneBook]++
		case "cpu":
			in[books.SpanBook]++
		}
	}
	in[books.FlowBook] = len(t.Flows)
	out := ledgerJSON{}
	for k := range books.NumKinds {
		b := books.Of(&t.Ledger, k)
		lost := books.Lost(&t.Ledger, k, t.Drops)
		out[k.String()] = bookJSON{
			Issued: b.Issued, Delivered: b.Delivered, InTrace: in[k], Open: b.Open, Lost: dropsOf(lost),
			Balanced: books.Balances(&t.Ledger, k, t.Drops),
		}
	}
	return out
}

// ledgerLines are the books for people: "zones: 120 issued = 118
// delivered (118 in this trace) + 0 open + 2 lost (no_frame 2)", one line
// a book, "DOES NOT BALANCE" after one that does not; "ledger: none" for
// a trace without books.
func ledgerLines(l ledgerJSON) []string {
	if l == nil {
		return []string{"ledger: none (the trace does not come from a Framescope recorder, or is a live capture)"}
	}
	var out []string
	for k := range books.NumKinds {
		b := l[k.String()]
		lost, causes, _ := strings.Cut(strings.TrimPrefix(dropsLine(b.Lost), "dropped: "), " ")
		line := fmt.Sprintf("ledger %s: %d issued = %d delivered (%d in this trace) + %d open + %s lost",
			k, b.Issued, b.Delivered, b.InTrace, b.Open, lost)
		if causes != "" {
			line += " " + causes
		}
		if !b.Balanced {
			line += "  DOES NOT BALANCE"
		}
		out = append(out, line)
	}
	return out
}
