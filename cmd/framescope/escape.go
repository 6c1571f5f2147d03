package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names in a trace (zones, tracks, devices, file names) are whatever the
// traced application or the file's author chose. Every writer of the CLI
// passes them through one of the functions here before they reach a
// terminal or a Markdown renderer, so that a name cannot move the cursor,
// retitle the terminal (ESC and OSC sequences), break a table's columns
// (tabs, newlines), or become a link, an image, a mention or emphasis in a
// pull-request comment. HTML goes through html/template, which escapes by
// context.

// termText returns s with every character a terminal would act on written
// as a Go escape: C0 and C1 controls (ESC, tab, newline, BEL...), DEL,
// bidirectional overrides and isolates (which reorder what follows), and
// bytes that are not UTF-8. Backslashes are doubled so that the escaped
// form cannot be mistaken for one.
func termText(s string) string {
	clean := true
	for _, r := range s {
		if r == '\\' || r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether a terminal acts on r rather than showing it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidirectional embeddings, overrides, isolates and marks
	case r == 0x2028 || r == 0x2029:
		return true // line and paragraph separators
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r)
}

// mdCode returns s as a Markdown code span fit for a table cell: inside a
// code span, Markdown makes no links, images, mentions, emphasis or HTML,
// so the name shows as written. Controls are escaped as for a terminal,
// the fence is one backtick longer than the longest run of backticks in
// s, and '|' is escaped so that it does not end the cell.
func mdCode(s string) string {
	s = termText(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ")) {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}
