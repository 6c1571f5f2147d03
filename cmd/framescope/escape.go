package main

import (
	"fmt"
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names in a trace (zones, tracks, devices, file names) and in a history
// (commits, testbeds, branches) are whatever the traced application, the
// file's author or a CI job chose. Every writer of the CLI passes them
// through this file's rule for its kind of output, so that a name cannot
// move the cursor, retitle the terminal (ESC and OSC sequences), start a
// line or a column of its own (newlines, tabs), reorder the text around
// it (bidi overrides, isolates and marks), hide (zero-width and other
// format characters), or become a link, an image, a mention, emphasis or
// markup:
//
//   - text: termText writes what a terminal would act on as a Go escape;
//   - Markdown: mdCode makes the name a code span, where no renderer makes
//     markup of it, its controls escaped as termText does;
//   - HTML: htmlName escapes as termText does, then as HTML, and isolates
//     the name's direction in <bdi>; svgText is for labels in a plot, where
//     <bdi> has no place. The page is UTF-8 whatever the bytes of a name;
//   - JSON keeps names exact: encoding/json escapes what JSON must, and
//     writes a byte that is not UTF-8 as U+FFFD.
//
// A sentence that holds names (a headline, a finding) is a phrase: its
// names are marked, and each output writes them by its own rule.

// termText returns s with every character a terminal would act on written
// as a Go escape: C0 and C1 controls (ESC, tab, newline, BEL...), DEL,
// format characters (bidi overrides, isolates and marks, which reorder
// what follows; zero-width spaces and joiners, the soft hyphen, BOM),
// line and paragraph separators, anything else not printable, and bytes
// that are not UTF-8. Backslashes are doubled so that the escaped form
// cannot be mistaken for one.
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

// mdCode returns s as a Markdown code span: inside one, Markdown makes no
// links, autolinks (http://, www.), images, mentions, emphasis or HTML,
// so the name shows as written. Controls are escaped as for a terminal,
// the fence is one backtick longer than the longest run of backticks in
// s (padded with a space where s starts or ends with one), so that no
// backtick of s ends the span, and '|' is escaped so that it does not
// end a table's cell (GitHub splits a row at '|' before it finds code
// spans; outside a table, the backslash shows).
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

// htmlName is a name in the text of an HTML page: escaped as termText
// does, so that the page is UTF-8 and holds no control, format or bidi
// character of the name's; then as HTML, so that it is no markup; and in
// <bdi>, so that its letters' direction (Hebrew, Arabic) reorders nothing
// around it.
func htmlName(s string) template.HTML {
	return template.HTML("<bdi>" + template.HTMLEscapeString(termText(s)) + "</bdi>")
}

// svgText is a name in a plot's label or tooltip, where <bdi> has no
// place: escaped as termText does; html/template escapes it as markup.
// Each label is a <text> of its own, so its direction is its own; a
// tooltip names its name last, so that nothing follows it to reorder.
func svgText(s string) string { return termText(s) }

// cutName is s cut to at most n bytes at a character's boundary (a byte
// that is not UTF-8 counts as one), so that a name cut short stays
// UTF-8.
func cutName(s string, n int) string {
	i := 0
	for i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		if i+size > n {
			break
		}
		i += size
	}
	return s[:i]
}

// A phrase is a sentence whose names are marked: text, markdown and html
// write it for their output, each name by that output's rule.
type phrase []phrasePart

type phrasePart struct {
	s    string
	name bool // s is a name, not the writer's own text
}

// untrusted marks an argument of phrasef as a name.
type untrusted string

// phrasef makes a phrase as fmt.Sprintf makes a string: an argument of
// type untrusted is a name of the phrase, one of type phrase is spliced in
// (each with any verb: %s), any other is formatted by its verb.
func phrasef(format string, args ...any) phrase {
	var p phrase
	lit := func(s string) {
		if s != "" {
			p = append(p, phrasePart{s: s})
		}
	}
	for {
		i := strings.IndexByte(format, '%')
		if i < 0 {
			lit(format)
			return p
		}
		lit(format[:i])
		j := i + 1
		for j < len(format)-1 && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		verb := format[i : j+1]
		format = format[j+1:]
		if verb == "%%" {
			lit("%")
			continue
		}
		switch a := args[0].(type) {
		case untrusted:
			p = append(p, phrasePart{s: string(a), name: true})
		case phrase:
			p = append(p, a...)
		default:
			lit(fmt.Sprintf(verb, a))
		}
		args = args[1:]
	}
}

// joinNames is names as a phrase, sep between them.
func joinNames(names []string, sep string) phrase {
	var p phrase
	for i, n := range names {
		if i > 0 {
			p = append(p, phrasePart{s: sep})
		}
		p = append(p, phrasePart{s: n, name: true})
	}
	return p
}

// render writes p's text through text and its names through nameRule.
func (p phrase) render(text, nameRule func(string) string) string {
	var b strings.Builder
	for _, part := range p {
		if part.name {
			b.WriteString(nameRule(part.s))
		} else {
			b.WriteString(text(part.s))
		}
	}
	return b.String()
}

func keep(s string) string { return s }

// String is p with its names as they are: for an error, which its
// writer escapes whole, or for JSON.
func (p phrase) String() string { return p.render(keep, keep) }

// text is p for a terminal.
func (p phrase) text() string { return p.render(keep, termText) }

// markdown is p for a Markdown document: its text is Markdown already.
func (p phrase) markdown() string { return p.render(keep, mdCode) }

// html is p for an HTML page's text.
func (p phrase) html() template.HTML {
	return template.HTML(p.render(template.HTMLEscapeString, func(s string) string { return string(htmlName(s)) }))
}
