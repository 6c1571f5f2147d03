package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The checks here read an output as its reader would, independently of
// escape.go: a terminal, a Markdown renderer (CommonMark with GitHub's
// tables and autolinks), a browser. Each returns "" when the output is
// safe, else what is wrong and where.

// actedOn reports whether a terminal or a browser acts on r rather than
// showing it: controls (C0, DEL, C1), format characters (zero-width
// spaces and joiners, soft hyphen, BOM, bidi marks, embeddings, overrides
// and isolates), and the line and paragraph separators.
func actedOn(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
}

// textIssue finds in out a byte that is not UTF-8 or a character a
// terminal acts on, newlines aside.
func textIssue(out string) string {
	for i, r := range out {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD"):
			return fmt.Sprintf("byte %#x at %d is not UTF-8: %s", out[i], i, around(out, i))
		case r != '\n' && actedOn(r):
			return fmt.Sprintf("%U at %d: %s", r, i, around(out, i))
		}
	}
	return ""
}

// around quotes out near byte i.
func around(out string, i int) string {
	return fmt.Sprintf("%q", out[max(i-60, 0):min(i+60, len(out))])
}

// markdownIssue finds, besides textIssue's, a backquote that opens no
// code span (CommonMark pairs a run of backquotes with the next run of
// the same length), markup outside code spans that a renderer makes
// live (a link, an autolink, a mention, HTML), and a table row with more
// or fewer cells than its header (GitHub splits a row at each '|' not
// escaped, inside code spans too).
func markdownIssue(md string) string {
	if s := textIssue(md); s != "" {
		return s
	}
	cells := -1
	for n, line := range strings.Split(md, "\n") {
		out, ok := outsideCode(line)
		if !ok {
			return fmt.Sprintf("line %d: a backquote opens no code span: %q", n+1, line)
		}
		low := strings.ToLower(out)
		for _, live := range []string{"http", "www.", "@", "<", "](", "mailto:"} {
			if strings.Contains(low, live) {
				return fmt.Sprintf("line %d: %q outside code spans: %q", n+1, live, line)
			}
		}
		switch {
		case !strings.HasPrefix(line, "|"):
			cells = -1
		case cells < 0:
			cells = tableBars(line)
		case tableBars(line) != cells:
			return fmt.Sprintf("line %d: %d cell bars, its header %d: %q", n+1, tableBars(line), cells, line)
		}
	}
	return ""
}

// tableBars counts the '|' of a table row not escaped by a backslash.
func tableBars(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// outsideCode is a line of Markdown with its code spans cut out, their
// delimiters too; ok is false where a run of backquotes outside a code
// span closes none (a renderer shows it, and what follows is no longer
// code). Outside code spans, a backslash makes the punctuation after it
// literal; inside, it is literal itself.
func outsideCode(line string) (out string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && i+1 < len(line) && strings.IndexByte(asciiPunct, line[i+1]) >= 0 {
			b.WriteString(line[i : i+2])
			i += 2
			continue
		}
		if c != '`' {
			b.WriteByte(c)
			i++
			continue
		}
		run := backquoteRun(line, i)
		end := closingRun(line, i+run, run)
		if end < 0 {
			return b.String(), false
		}
		i = end + run
	}
	return b.String(), true
}

// asciiPunct is what a backslash escapes in CommonMark.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

func backquoteRun(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun is where the next run of exactly n backquotes from i starts,
// or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		run := backquoteRun(s, i)
		if run == n {
			return i
		}
		i += run
	}
	return -1
}

// codeFree is md with its code spans cut out and its digits and lines
// sorted, to compare an output with its names against one with plain
// names: names must sit in code spans alone, so what is left is the same.
func codeFree(md string) []string {
	var lines []string
	for _, line := range strings.Split(md, "\n") {
		out, _ := outsideCode(line)
		lines = append(lines, foldDigits(out))
	}
	slices.Sort(lines)
	return lines
}

// foldDigits writes each run of digits in s as one 0.
func foldDigits(s string) string {
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case !isDigit(s[i]):
			b.WriteByte(s[i])
		case i == 0 || !isDigit(s[i-1]):
			b.WriteByte('0')
		}
	}
	return b.String()
}
