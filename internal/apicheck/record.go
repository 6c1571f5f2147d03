package apicheck

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
)

// Format returns a record file: header (comment lines, each starting with
// "#"), then the lines, one a line.
func Format(header string, lines []string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// Parse returns a record file's lines, sorted, without its comments and
// blank lines.
func Parse(data []byte) []string {
	var lines []string
	for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
		if l := strings.TrimSpace(s.Text()); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// Diff returns the lines of got that recorded lacks (added) and those of
// recorded that got lacks (removed); both lists must be sorted.
func Diff(recorded, got []string) (added, removed []string) {
	for len(recorded) > 0 || len(got) > 0 {
		switch {
		case len(got) == 0 || len(recorded) > 0 && recorded[0] < got[0]:
			removed, recorded = append(removed, recorded[0]), recorded[1:]
		case len(recorded) == 0 || got[0] < recorded[0]:
			added, got = append(added, got[0]), got[1:]
		default:
			recorded, got = recorded[1:], got[1:]
		}
	}
	return added, removed
}

// Report writes a diff for people: removed lines with "-", added with
// "+", in the order of the lines, so that the old and new lines of a
// changed signature sit side by side.
func Report(added, removed []string) string {
	type change struct{ sign, line string }
	var all []change
	for _, l := range removed {
		all = append(all, change{"-", l})
	}
	for _, l := range added {
		all = append(all, change{"+", l})
	}
	slices.SortStableFunc(all, func(a, b change) int { return strings.Compare(a.line, b.line) })
	var b strings.Builder
	for _, c := range all {
		b.WriteString(c.sign + c.line + "\n")
	}
	return b.String()
}
