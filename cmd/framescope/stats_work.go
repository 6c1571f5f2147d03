package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/framescope/framescope/timeline"
)

// The work of GPU zones (issue 23): for each GPU zone name of a trace
// whose zones carry Work, how many of its instances were counted, how
// many have no counts and why, and the mean, largest and total count of
// each pipeline statistic over the counted instances, as the time
// columns are over every instance. A trace without Work prints exactly as
// before: no section, no JSON key.

// workReasons are the reasons a zone has no counts, in their order:
// every WorkMissing after WorkCounted that has a key.
var workReasons = func() []timeline.WorkMissing {
	var out []timeline.WorkMissing
	for m := timeline.WorkMissing(1); m != 0 && m.String() != "unknown"; m++ {
		out = append(out, m)
	}
	return out
}()

// reasonIndex is m's index in a count by reason: its place in
// workReasons, or len(workReasons) (unknown) for a value past them.
func reasonIndex(m timeline.WorkMissing) int {
	if m >= 1 && int(m) <= len(workReasons) {
		return int(m) - 1
	}
	return len(workReasons)
}

// workAcc sums the work of the instances of one zone: of a trace, for
// stats, or of one run, for diff (runWorkSum).
type workAcc struct {
	counted  uint64
	missing  []uint64                             // by reasonIndex
	n        [timeline.NumPipelineStats]uint64    // counted instances with statistic i
	sum      [timeline.NumPipelineStats][2]uint64 // the sum of their counts, 128 bits: hi, lo
	min, max [timeline.NumPipelineStats]uint64
}

func (a *workAcc) add(w *timeline.Work) {
	if w.Missing != timeline.WorkCounted {
		if a.missing == nil {
			a.missing = make([]uint64, len(workReasons)+1)
		}
		a.missing[reasonIndex(w.Missing)]++
		return
	}
	a.counted++
	w.Stats.Each(func(i int) {
		v := w.Count[i]
		if a.n[i] == 0 || v < a.min[i] {
			a.min[i] = v
		}
		a.n[i]++
		var c uint64
		a.sum[i][1], c = bits.Add64(a.sum[i][1], v, 0)
		a.sum[i][0] += c // at most 2^64 instances: cannot wrap
		a.max[i] = max(a.max[i], v)
	})
}

// zoneWork collects the Work of every GPU zone by name, nil for a trace
// whose zones carry none, and the statistics its zones count (or would
// have counted, for those without counts).
func zoneWork(t *timeline.Trace) (map[zone]*workAcc, timeline.PipelineStats) {
	var out map[zone]*workAcc
	var stats timeline.PipelineStats
	var kinds map[timeline.TrackID]string
	for i := range t.Spans {
		s := &t.Spans[i]
		if s.Work == nil {
			continue
		}
		if kinds == nil {
			kinds, out = trackKinds(t), map[zone]*workAcc{}
		}
		if kinds[s.Track] != "gpu" {
			continue
		}
		z := zone{"gpu", t.Name(s.Name)}
		a := out[z]
		if a == nil {
			a = &workAcc{}
			out[z] = a
		}
		a.add(s.Work)
		stats |= s.Work.Stats & timeline.AllPipelineStats
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, stats
}

// statValue is one statistic's value, by its key; a JSON number written
// exactly (counts past 2^53 included).
type statValue struct {
	Key   string
	Value json.Number
}

// statValues are values by statistic, in bit order: a JSON object.
type statValues []statValue

func (v statValues) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, s.Key)
		b = append(b, ':')
		b = append(b, s.Value...)
	}
	return append(b, '}'), nil
}

func (v *statValues) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	*v = statValues{}
	if _, err := d.Token(); err != nil { // {
		return err
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return err
		}
		var n json.Number
		if err := d.Decode(&n); err != nil {
			return err
		}
		*v = append(*v, statValue{k.(string), n})
	}
	return nil
}

// Get returns the value of the statistic of key k, "" when v lacks it.
func (v statValues) Get(k string) json.Number {
	for _, s := range v {
		if s.Key == k {
			return s.Value
		}
	}
	return ""
}

// noCountsJSON is how many zones have no counts: "total", then every
// reason by its key, in order ("unknown" too when not zero: a reason this
// build does not know).
type noCountsJSON struct {
	Total uint64
	By    []uint64 // by reasonIndex
}

func (n noCountsJSON) MarshalJSON() ([]byte, error) {
	b := []byte(`{"total":`)
	b = strconv.AppendUint(b, n.Total, 10)
	for i, m := range workReasons {
		b = append(b, `,"`+m.String()+`":`...)
		b = strconv.AppendUint(b, n.count(i), 10)
	}
	if u := n.count(len(workReasons)); u > 0 {
		b = append(b, `,"unknown":`...)
		b = strconv.AppendUint(b, u, 10)
	}
	return append(b, '}'), nil
}

func (n *noCountsJSON) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	n.Total, n.By = m["total"], make([]uint64, len(workReasons)+1)
	for i, r := range workReasons {
		n.By[i] = m[r.String()]
	}
	n.By[len(workReasons)] = m["unknown"]
	return nil
}

func (n noCountsJSON) count(i int) uint64 {
	if i < len(n.By) {
		return n.By[i]
	}
	return 0
}

// reasons is "(render_pass 1, elsewhere 1, ...)" with every reason that
// is not zero, "" when none is.
func (n noCountsJSON) reasons() string {
	var b strings.Builder
	sep := "("
	for i := range len(workReasons) + 1 {
		if c := n.count(i); c > 0 {
			k := "unknown"
			if i < len(workReasons) {
				k = workReasons[i].String()
			}
			fmt.Fprintf(&b, "%s%s %d", sep, k, c)
			sep = ", "
		}
	}
	if sep == ", " {
		b.WriteByte(')')
	}
	return b.String()
}

func noCountsOf(by []uint64) noCountsJSON {
	n := noCountsJSON{By: make([]uint64, len(workReasons)+1)}
	for i, c := range by {
		n.By[i] = c
		n.Total += c
	}
	return n
}

// zoneWorkJSON is one zone's work for --json: of its instances, how many
// were counted and how many have no counts (by reason); over the counted
// ones, each statistic's mean, largest and total count.
type zoneWorkJSON struct {
	Counted  uint64       `json:"counted"`
	NoCounts noCountsJSON `json:"no_counts"`
	Mean     statValues   `json:"mean"`
	Max      statValues   `json:"max"`
	Total    statValues   `json:"total"`
}

// workJSON is a trace's work for --json: the statistics its zones count,
// how many GPU zones count work, how many were counted and how many have
// no counts, by reason.
type workJSON struct {
	Stats    []string     `json:"stats"`
	Zones    uint64       `json:"zones"`
	Counted  uint64       `json:"counted"`
	NoCounts noCountsJSON `json:"no_counts"`
}

func (a *workAcc) json() *zoneWorkJSON {
	z := &zoneWorkJSON{Counted: a.counted, NoCounts: noCountsOf(a.missing),
		Mean: statValues{}, Max: statValues{}, Total: statValues{}}
	timeline.AllPipelineStats.Each(func(i int) {
		if a.n[i] == 0 {
			return
		}
		k := timeline.StatKey(i)
		z.Mean = append(z.Mean, statValue{k, json.Number(meanString(a.sum[i][0], a.sum[i][1], a.n[i]))})
		z.Max = append(z.Max, statValue{k, json.Number(strconv.FormatUint(a.max[i], 10))})
		z.Total = append(z.Total, statValue{k, json.Number(uint128String(a.sum[i][0], a.sum[i][1]))})
	})
	return z
}

// meanString is (hi, lo) / n, a 128-bit sum of n counts, exactly in its
// integer part and rounded to three decimals, trailing zeros cut.
func meanString(hi, lo, n uint64) string {
	q, r := bits.Div64(hi, lo, n) // hi < n: the sum of n counts is below n*2^64
	h, l := bits.Mul64(r, 1000)
	l, c := bits.Add64(l, n/2, 0)
	d, _ := bits.Div64(h+c, l, n) // (r*1000 + n/2) / n <= 1000
	if d == 1000 {
		q, d = q+1, 0 // q+1 fits: a mean is at most the largest count
	}
	s := strconv.FormatUint(q, 10)
	if d == 0 {
		return s
	}
	return s + strings.TrimRight(fmt.Sprintf(".%03d", d), "0")
}

func uint128String(hi, lo uint64) string {
	if hi == 0 {
		return strconv.FormatUint(lo, 10)
	}
	v := new(big.Int).SetUint64(hi)
	return v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(lo)).String()
}

// addWork puts the work of t's GPU zones into r: each zone's, and the
// trace's own. r.Zones must be made.
func addWork(r *statsReport, t *timeline.Trace) {
	accs, stats := zoneWork(t)
	if accs == nil {
		return
	}
	w := &workJSON{Stats: []string{}}
	stats.Each(func(i int) { w.Stats = append(w.Stats, timeline.StatKey(i)) })
	missing := make([]uint64, len(workReasons)+1)
	for i := range r.Zones {
		z := &r.Zones[i]
		a := accs[zone{z.Kind, z.Zone}]
		if a == nil {
			continue
		}
		z.Work = a.json()
		w.Counted += a.counted
		for j, c := range a.missing {
			missing[j] += c
		}
	}
	w.NoCounts = noCountsOf(missing)
	w.Zones = w.Counted + w.NoCounts.Total
	r.Work = w
}

// workRows are the rows of the work table, by zone in the zones' order:
// kind, zone name, counted, no counts, then each statistic's mean ("-"
// where the zone has none of it).
func workRows(r statsReport) (header []string, rows [][]string) {
	header = append([]string{"kind", "zone", "counted", "no counts"}, r.Work.Stats...)
	for _, z := range r.Zones {
		if z.Work == nil {
			continue
		}
		row := []string{z.Kind, z.Zone, strconv.FormatUint(z.Work.Counted, 10), strconv.FormatUint(z.Work.NoCounts.Total, 10)}
		for _, k := range r.Work.Stats {
			v := string(z.Work.Mean.Get(k))
			if v == "" {
				v = "-"
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// workTitle heads the work table; workLine follows it.
const workTitle = "GPU work (pipeline statistics), mean per zone with counts:"

func workLine(w *workJSON) string {
	s := fmt.Sprintf("no counts: %d of %d zones that count work", w.NoCounts.Total, w.Zones)
	if r := w.NoCounts.reasons(); r != "" {
		s += " " + r
	}
	return s
}

func writeWorkText(w io.Writer, r statsReport) {
	if r.Work == nil {
		return
	}
	header, rows := workRows(r)
	fmt.Fprintf(w, "\n%s\n", workTitle)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, row := range rows {
		row[1] = termText(row[1])
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, workLine(r.Work))
}

func writeWorkMarkdown(w io.Writer, r statsReport) {
	if r.Work == nil {
		return
	}
	header, rows := workRows(r)
	fmt.Fprintf(w, "\n**%s**\n\n", strings.TrimSuffix(workTitle, ":"))
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, "|---|---"+strings.Repeat("|--:", len(header)-2)+"|")
	for _, row := range rows {
		row[1] = mdCode(row[1])
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
	fmt.Fprintf(w, "\n%s\n", workLine(r.Work))
}
