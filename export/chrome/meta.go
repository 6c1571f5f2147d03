package chrome

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// trackArgs is the args of a framescope_track event.
type trackArgs struct {
	ID     uint32 `json:"id"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Parent uint32 `json:"parent"`
	Order  int32  `json:"order"`
	Lane   int32  `json:"lane"`
	Unit   uint8  `json:"unit"`
	Device string `json:"device"`
	Family uint32 `json:"family"`
	Index  uint32 `json:"index"`
	Flags  string `json:"flags"`
	Series string `json:"series"`
	Across bool   `json:"across"`
}

var kinds = map[string]timeline.TrackKind{}

func init() {
	for k := timeline.TrackCPU; k <= timeline.TrackCounter; k++ {
		kinds[k.String()] = k
	}
}

func (rd *reader) meta(ev *rawEvent, pid, tid int64) error {
	switch string(ev.Name.bytes()) {
	case "process_name":
		var a struct{ Name string }
		if json.Unmarshal(ev.Args, &a) == nil && rd.t.Process.Name == "" {
			rd.t.Process = timeline.Process{PID: int32(pid), Name: a.Name}
		}
	case "thread_name":
		var a struct{ Name string }
		if json.Unmarshal(ev.Args, &a) == nil {
			rd.thread(pid, tid).name = a.Name
		}
	case metaTrack:
		var a trackArgs
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaTrack, plainJSON(err))
		}
		kind, ok := kinds[a.Kind]
		if !ok || a.ID == 0 {
			return fmt.Errorf("%s: bad track id %d or kind %q", metaTrack, a.ID, a.Kind)
		}
		if _, dup := rd.trackAt[timeline.TrackID(a.ID)]; dup {
			return fmt.Errorf("%s: track %d described twice", metaTrack, a.ID)
		}
		tr := timeline.Track{
			ID: timeline.TrackID(a.ID), Kind: kind, Name: a.Name, Parent: timeline.TrackID(a.Parent),
			Order: a.Order, Lane: a.Lane, Unit: timeline.Unit(a.Unit), Across: a.Across && kind == timeline.TrackGPULane,
			Queue: timeline.Queue{Device: a.Device, Family: a.Family, Index: a.Index, Flags: a.Flags},
		}
		rd.trackAt[tr.ID] = len(rd.t.Tracks)
		rd.t.Tracks = append(rd.t.Tracks, tr)
		rd.ours[tr.ID] = true
		rd.nextID = max(rd.nextID, tr.ID)
		if kind == timeline.TrackCounter {
			series := a.Series
			if series == "" {
				series = a.Name
			}
			if _, dup := rd.counters[counterKey(pid, series)]; !dup {
				rd.counters[counterKey(pid, series)] = tr.ID
			}
		} else {
			th := rd.thread(pid, tid)
			if th.track != 0 && th.track != tr.ID {
				return fmt.Errorf("%s: thread %d has two tracks", metaTrack, tid)
			}
			th.track = tr.ID
		}
	case metaFramesList:
		rd.thread(pid, tid).framesList = true
	case metaDerived:
		rd.markDerived(ev, pid, tid)
	case metaFrame:
		var a struct {
			ID         uint64
			Start, End int64
		}
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaFrame, plainJSON(err))
		}
		rd.t.Frames = append(rd.t.Frames, timeline.Frame{ID: a.ID, Start: a.Start, End: a.End})
	case metaCalibration:
		var a struct {
			Track    uint32
			Time     int64
			ErrNs    *float64 `json:"err_ns"`
			DriftPPM *float64 `json:"drift_ppm"`
			Samples  int
		}
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaCalibration, plainJSON(err))
		}
		c := timeline.Calibration{Track: timeline.TrackID(a.Track), Time: a.Time, Samples: a.Samples}
		if a.ErrNs != nil {
			c.ErrNs = *a.ErrNs
		}
		if a.DriftPPM != nil {
			c.DriftPPM = *a.DriftPPM
		}
		rd.t.Calibrations = append(rd.t.Calibrations, c)
	case metaDrops:
		var a map[string]uint64
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaDrops, plainJSON(err))
		}
		rd.t.Drops = timeline.Drops{}
		for k, v := range a {
			if c, ok := books.CauseOf(k); ok {
				*books.Count(&rd.t.Drops, c) = v
			}
		}
		rd.dropsOK = true
		// The counter also counts the flows, samples and work the writer
		// refused.
		rd.dropsRecorded, _ = timeline.Sum(rd.t.Drops.Total(), a["invalid_flows"], a["invalid_samples"], a["invalid_work"]) // saturates, as the writer's
	case metaLedger:
		var a map[string]uint64
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("%s args: %w", metaLedger, plainJSON(err))
		}
		rd.t.Ledger = timeline.Ledger{}
		for k, v := range a {
			if i, ok := books.LedgerKeyOf(k); ok {
				*books.LedgerCount(&rd.t.Ledger, i) = v
			}
		}
	}
	return nil
}

// counterKey names a counter: per process, by name, as viewers see it.
func counterKey(pid int64, name string) string {
	return strconv.FormatInt(pid, 10) + "/" + name
}

// markDerived notes a framescope_derived mark: of a counter when its
// args name a series, else of its thread.
func (rd *reader) markDerived(ev *rawEvent, pid, tid int64) {
	var a struct{ Series *string }
	if len(ev.Args) > 0 && json.Unmarshal(ev.Args, &a) == nil && a.Series != nil {
		if rd.derived == nil {
			rd.derived = map[string]bool{}
		}
		rd.derived[counterKey(pid, *a.Series)] = true
		return
	}
	rd.thread(pid, tid).derived = true
}

func (rd *reader) counter(ev *rawEvent, pid int64) error {
	if rd.derived != nil && rd.derived[counterKey(pid, string(ev.Name.bytes()))] {
		return nil // derived from the frames' limits: not the trace's
	}
	if string(ev.Name.bytes()) == dropsCounter {
		// The running total of everything dropped: Close's
		// framescope_drops record says what, but a process killed before
		// Close leaves only this (see reader.counted).
		var a struct{ Value float64 }
		if json.Unmarshal(ev.Args, &a) == nil && a.Value > float64(rd.dropsCounter) {
			rd.dropsCounter = uint64(min(a.Value, math.MaxUint64))
		}
		return nil
	}
	ts, err := ev.Ts.micros()
	if err != nil {
		return fmt.Errorf("ts %s: %w", &ev.Ts, err)
	}
	var args map[string]json.RawMessage
	if len(ev.Args) > 0 {
		if err := json.Unmarshal(ev.Args, &args); err != nil {
			return fmt.Errorf("args: %w", plainJSON(err))
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v float64
		if json.Unmarshal(args[k], &v) != nil {
			continue // not a number: not a counter value
		}
		name := string(ev.Name.bytes())
		if k != "value" || len(args) > 1 {
			name += " " + k
		}
		ck := counterKey(pid, name)
		id, ok := rd.counters[ck]
		if !ok {
			rd.nextID++
			id = rd.nextID
			rd.trackAt[id] = len(rd.t.Tracks)
			rd.t.Tracks = append(rd.t.Tracks, timeline.Track{ID: id, Kind: timeline.TrackCounter, Name: name})
			rd.counters[ck] = id
		}
		rd.t.Samples = append(rd.t.Samples, timeline.Sample{Track: id, Time: ts, Value: v})
	}
	return nil
}

// countDrops adds to the trace's drops what the running "framescope
// dropped" counter counted beyond the framescope_drops record: all of it
// when the writer never closed (the process was killed), in Drops.Spans,
// the count of what was refused, as its cause is not in the counter.
func (rd *reader) countDrops() {
	if rd.dropsCounter > rd.dropsRecorded {
		rd.t.Drops.Spans, _ = timeline.Sum(rd.t.Drops.Spans, rd.dropsCounter-rd.dropsRecorded) // past 2^64-1, Validate refuses
	}
}
