package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// namedHistory records 12 commits of one synthetic run each into a new
// SQLite history of testbed "synthetic" on branch, through the command
// line: the zone z1 renamed zone and 30% slower from commit 8 on, so
// that check names it at commit 8; commit i is named shas[i] where
// given, else c%02d. It returns the history's DSN and what history add
// wrote.
func namedHistory(t *testing.T, branch, zone string, shas map[int]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "h.db")
	var added strings.Builder
	for i := range 12 {
		var slow map[string]float64
		if i >= 8 {
			slow = map[string]float64{"z1": 1.3}
		}
		tr := synthRun(uint64(700+i), 0.01, slow)
		tr.Names[4] = zone // z1
		run := writeFile(t, dir, fmt.Sprintf("c%02d.pftrace", i), tr, formatPerfetto, false)
		sha, ok := shas[i]
		if !ok {
			sha = fmt.Sprintf("c%02d", i)
		}
		code, out, errs := runCLI("history", "add", "-db", db, "-commit", sha, "-seq", fmt.Sprint(i), "-branch", branch, run)
		if code != 0 {
			t.Fatalf("add %q: %s", sha, errs)
		}
		added.WriteString(out)
	}
	return db, added.String()
}

// The text of check, show and add shows names escaped: an OSC that would
// retitle the terminal, a CSI, a newline that would start a line of its
// own (a heading, in a log rendered as markdown), a tab, and bidi
// overrides and isolates in zone, commit and branch names are written as
// Go escapes, the finding on its one line.
func TestHistoryTextEscapesNames(t *testing.T) {
	zone := "\x1b]0;owned\x07\x1b[2J\x1b[31mred\n# heading\tand tab \u202eexe.gnp"
	branch := "main\u2067x"
	db, added := namedHistory(t, branch, zone, map[int]string{8: "c08\u202eevil"})
	code, out, errs := runCLI("history", "check", "-db", db, "-testbed", "synthetic", "-branch", branch)
	if code != exitRegressed {
		t.Fatalf("exit %d, want %d: %s%s", code, exitRegressed, out, errs)
	}
	_, shown, _ := runCLI("history", "show", "-db", db, "-testbed", "synthetic", "-branch", branch)
	for what, s := range map[string]string{"check": out, "show": shown, "add": added} {
		if issue := textIssue(s); issue != "" {
			t.Errorf("%s: %s", what, issue)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := `  REGRESSED gpu:graphics queue 0.0/\x1b]0;owned\x07\x1b[2J\x1b[31mred\n# heading\tand tab \u202eexe.gnp p50: +`
	if len(lines) != 3 || !strings.HasPrefix(lines[2], want) || !strings.Contains(lines[2], `at commit c08\u202eevil (seq 8)`) {
		t.Errorf("want the headline, the rules and the finding, on 3 lines, the finding\n%s ... at commit c08\\u202eevil (seq 8); got\n%s", want, out)
	}
	if !strings.Contains(lines[0], `REGRESSED: main\u2067x on`) {
		t.Errorf("the headline: %s", lines[0])
	}
}

// The markdown of check and show names everything as code, where no
// renderer makes a link or a mention: URLs and www. names, @mentions, and
// a commit name with backquotes, which would end a code span of one
// backquote early.
func TestHistoryMarkdownNamesInert(t *testing.T) {
	zone := "https://evil.example/x www.evil.example @admin"
	db, _ := namedHistory(t, "main", zone, map[int]string{8: "c08`@admin ``x"})
	dir := t.TempDir()
	for _, cmd := range []string{"check", "show"} {
		md := filepath.Join(dir, cmd+".md")
		if code, out, errs := runCLI("history", cmd, "-db", db, "-testbed", "synthetic", "-md", md); code == exitBadInput {
			t.Fatalf("%s: %s%s", cmd, out, errs)
		}
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		if issue := markdownIssue(string(b)); issue != "" {
			t.Errorf("%s -md: %s\n%s", cmd, issue, b)
		}
		for _, want := range []string{"| `gpu:graphics queue 0.0/" + zone + "` |", "| ```c08`@admin ``x``` (seq 8) |"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s -md lacks %s:\n%s", cmd, want, b)
			}
		}
	}
}

// The page of show -html is UTF-8 whatever the names: a commit name cut
// under the plot inside a character is cut before it; a right-to-left
// override in a zone's name is shown as \u202e, and names are isolated
// (<bdi>), so that neither the override nor right-to-left letters reorder
// the rest of their line.
func TestHistoryHTMLNamesIsolated(t *testing.T) {
	zone := "\u202egnp.exe \u05e9\u05dc\u05d5\u05dd" // an override; Hebrew, which runs right to left
	db, _ := namedHistory(t, "main", zone, map[int]string{0: "abcdefghijk€€", 8: "c08-abcdefg€", 11: "€€€€€"})
	page := filepath.Join(t.TempDir(), "h.html")
	if code, out, errs := runCLI("history", "show", "-db", db, "-testbed", "synthetic", "-html", page); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !utf8.ValidString(html) {
		t.Errorf("the page is not UTF-8")
	}
	if issue := textIssue(html); issue != "" {
		t.Errorf("the page: %s", issue)
	}
	for _, want := range []string{
		"<bdi>gpu:graphics queue 0.0/\\u202egnp.exe \u05e9\u05dc\u05d5\u05dd p50</bdi>",
		"at commit <bdi>c08-abcdefg€</bdi> (seq 8)",
		">abcdefghijk<", ">c08-abcdefg<", ">€€€€<",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s:\n%s", want, html)
		}
	}
}
