package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// hostileNames are names a trace may carry: terminal escapes (CSI, an OSC that
// retitles the window, an OSC 8 hyperlink), table breakers, bidi
// overrides, invalid UTF-8, and Markdown links, images, mentions,
// emphasis and HTML.
var hostileNames = []string{
	"\x1b[2J\x1b[31mred",
	"\x1b]0;owned\x07title",
	"\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"tab\there\nnew\rline",
	"\u202eevil\u2066",
	"bad\xff\xfeutf8",
	"\u0085next\u009bcsi",
	"[click](http://evil.example)",
	"![img](http://evil.example/x.png)",
	"@everyone and @org/team",
	"*bold* _it_ ~~gone~~ `code` ``two``",
	"<img src=x onerror=alert(1)>",
	"pipe | in | name",
}

func TestTermText(t *testing.T) {
	for _, s := range hostileNames {
		got := termText(s)
		for _, r := range got {
			if unsafeRune(r) {
				t.Errorf("termText(%q) = %q keeps %U", s, got, r)
			}
		}
		if strings.ContainsAny(got, "\x1b\t\n\r\x07") {
			t.Errorf("termText(%q) = %q", s, got)
		}
	}
	if got := termText("frame \\ ok µs"); got != `frame \\ ok µs` {
		t.Errorf("plain: %q", got)
	}
	if got := termText("a\tb\x1b"); got != `a\tb\x1b` {
		t.Errorf("got %q", got)
	}
}

func TestMdCode(t *testing.T) {
	for _, s := range hostileNames {
		got := mdCode(s)
		if strings.ContainsAny(got, "\n\r\x1b") {
			t.Errorf("mdCode(%q) = %q keeps a control", s, got)
		}
		// One code span: starts and ends with the same fence, and no run
		// of backticks inside is as long as the fence.
		fence := got[:strings.IndexFunc(got, func(r rune) bool { return r != '`' })]
		inner := strings.TrimSuffix(strings.TrimPrefix(got, fence), fence)
		if !strings.HasSuffix(got, fence) || strings.Contains(inner, fence) {
			t.Errorf("mdCode(%q) = %q: not one code span", s, got)
		}
		if strings.Contains(strings.ReplaceAll(inner, `\|`, ""), "|") {
			t.Errorf("mdCode(%q) = %q: a bare | ends the table cell", s, got)
		}
	}
	if got := mdCode("`x`"); got != "`` `x` ``" {
		t.Errorf("backticks: %q", got)
	}
}

// hostileTrace has one GPU and one CPU zone per hostile name.
func hostileTrace(seed int64) *timeline.Trace {
	tr := &timeline.Trace{
		Names: append([]string{""}, hostileNames...),
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "cpu \x1b[31m[x](http://e)"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "q", Queue: timeline.Queue{Device: "dev\x1b]0;t\x07 @admin", Flags: "graphics"}},
		},
	}
	for f := range int64(10) {
		for i := range hostileNames {
			for _, tk := range []timeline.TrackID{1, 2} {
				start := f*1_000_000 + int64(i)*1000
				tr.Spans = append(tr.Spans, timeline.Span{Track: tk, Name: timeline.NameID(i + 1), Start: start, End: start + 500 + seed + f, Frame: uint64(f + 1)})
			}
		}
		tr.Frames = append(tr.Frames, timeline.Frame{ID: uint64(f + 1), Start: f * 1_000_000, End: f*1_000_000 + 900_000})
	}
	return tr
}

// TestOutputsEscapeNames runs every text and Markdown writer of diff and
// stats on a trace of hostile names and checks that no control character
// reaches the output and that no name is live Markdown.
func TestOutputsEscapeNames(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.pftrace", hostileTrace(0), formatPerfetto, false)
	b := writeFile(t, dir, "b.pftrace", hostileTrace(3), formatPerfetto, false)
	for _, args := range [][]string{
		{"diff", a, b}, {"diff", "--markdown", a, b}, {"diff", "--driver", "drv\x1b[1m", a, b}, {"diff", "--markdown", "--driver", "[d](http://e)", a, b},
		{"stats", a}, {"stats", "--markdown", a}, {"benchfmt", a},
	} {
		code, out, errs := runCLI(args...)
		if code == 2 {
			t.Fatalf("%q: exit 2: %s", args, errs)
		}
		for i, r := range out {
			if r != '\n' && unsafeRune(r) {
				t.Errorf("%q: output keeps %U at %d", args[:len(args)-1], r, i)
				break
			}
		}
		if strings.Contains(out, "\x1b") || strings.Contains(errs, "\x1b") {
			t.Errorf("%q: ESC in the output", args)
		}
		if args[1] == "--markdown" {
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "| gpu |") && !strings.HasPrefix(line, "| cpu |") {
					continue
				}
				cells := splitCells(line)
				if len(cells) < 3 {
					t.Errorf("%q: row %q", args, line)
					continue
				}
				names := cells[1:3] // diff: track and zone
				if args[0] == "stats" {
					if len(cells) < 8 {
						continue // the per-frame table names no zone
					}
					names = cells[1:2]
				}
				for _, c := range names {
					if !strings.HasPrefix(c, "`") || !strings.HasSuffix(c, "`") {
						t.Errorf("%q: name cell %q is not a code span", args, c)
					}
				}
			}
		}
	}
	// Tabs in names do not add columns to the text table.
	_, out, _ := runCLI("diff", a, b)
	var rows int
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "gpu ") || strings.HasPrefix(line, "cpu ") {
			rows++
		}
	}
	if rows != 2*len(hostileNames) {
		t.Errorf("%d table rows, want %d (a name broke a line):\n%s", rows, 2*len(hostileNames), out)
	}
}

// splitCells splits a Markdown table row at the | that are not escaped.
func splitCells(line string) []string {
	var cells []string
	var cur bytes.Buffer
	for i := 1; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return cells
}

// cutName cuts at a character's boundary, a byte that is not UTF-8
// counting as one character.
func TestCutName(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcdefghijk€€", 12, "abcdefghijk"},
		{"abcdefghi€€", 12, "abcdefghi€"},
		{"€€€€€", 12, "€€€€"},
		{"short", 12, "short"},
		{"ab\xff\xfe\xe2\x82", 4, "ab\xff\xfe"},
		{"€", 2, ""},
	} {
		if got := cutName(c.s, c.n); got != c.want {
			t.Errorf("cutName(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// A phrase writes its text as given and each name by its output's rule;
// phrasef formats the other arguments by their verbs.
func TestPhrase(t *testing.T) {
	inner := phrasef("%s on %s", untrusted("a`b"), untrusted("x\u202ey"))
	p := phrasef("%-6d|%+.1f%% %s, %s.", 42, 2.5, inner, untrusted("<i>"))
	for _, c := range []struct{ what, got, want string }{
		{"String", p.String(), "42    |+2.5% a`b on x\u202ey, <i>."},
		{"text", p.text(), `42    |+2.5% a` + "`" + `b on x\u202ey, <i>.`},
		{"markdown", p.markdown(), "42    |+2.5% ``a`b`` on `x\\u202ey`, `<i>`."},
		{"html", string(p.html()), "42    |+2.5% <bdi>a`b</bdi> on <bdi>x\\u202ey</bdi>, <bdi>&lt;i&gt;</bdi>."},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
}
