// Package doccheck holds tests of the repository's documentation: every
// file and heading that README.md, CHANGELOG.md and docs/ point to exists,
// and the pages written for users name no issue numbers, which a user
// cannot look up.
package doccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// rootDirs are the top-level directories of the repository whose paths the
// docs mention: a token in backticks that starts with one of them is a path
// from the repository's root.
var rootDirs = map[string]bool{
	"clock":    true,
	"cmd":      true,
	"docs":     true,
	"examples": true,
	"export":   true,
	"internal": true,
	"layer":    true,
	"live":     true,
	"profiler": true,
	"scripts":  true,
	"timeline": true,
}

var (
	// [text](target) and ![alt](target), with an optional "title".
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// [label]: target
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// `code`
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// docs/... in running text.
	bareDocs = regexp.MustCompile(`(?:^|[\s(\[])((?:\./)?docs/[A-Za-z0-9_./*-]+)`)
	// issue 36, issue-37, issue36, issues #5, issue #5.
	issueRef = regexp.MustCompile(`(?i)\bissues?[ -]?#?\d+`)
	heading  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fence    = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// repoRoot walks up from the test's directory to the one holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// docFiles lists README.md, CHANGELOG.md if present, and docs/**/*.md,
// relative to root with forward slashes.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, f := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no documentation found")
	}
	return files
}

// line is one line of a Markdown file, with whether it lies in a fenced
// code block.
type line struct {
	n       int
	text    string
	inFence bool
}

func readLines(t *testing.T, path string) []line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	in := false
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if fence.MatchString(text) {
			lines = append(lines, line{n, text, true})
			in = !in
			continue
		}
		lines = append(lines, line{n, text, in})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// anchorOf is the fragment GitHub gives a heading: lowercase, punctuation
// other than '-' and '_' dropped, spaces turned into '-'.
func anchorOf(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the fragments of a Markdown file's headings; a heading
// met again gets -1, -2... as on GitHub.
func anchors(lines []line) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range lines {
		if l.inFence {
			continue
		}
		m := heading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		a := anchorOf(m[2])
		if k := seen[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// trimToken takes the punctuation around a path in prose or a command off.
func trimToken(s string) string {
	s = strings.Trim(s, `"'()[]{}<>,;:`)
	s = strings.TrimRight(s, ".")
	return strings.TrimPrefix(s, "./")
}

// exists says whether a path, or any match of a glob, is there.
func exists(p string) bool {
	if strings.ContainsAny(p, "*?[") {
		m, err := filepath.Glob(p)
		return err == nil && len(m) > 0
	}
	_, err := os.Stat(p)
	return err == nil
}

// mention is a path a doc cites, resolved to the file system.
type mention struct {
	where string // file:line
	cited string // as written
	path  string // on disk
	frag  string // #fragment of a link, or ""
}

// mentions finds every relative link target, and every path in backticks
// that starts with a top-level directory (or measurements/, from a page
// in docs/, or a sibling page's name), and docs/ paths in running text.
func mentions(root, file string, lines []line) []mention {
	dir := filepath.Join(root, filepath.FromSlash(filepath.Dir(file)))
	var out []mention
	add := func(l line, cited, path, frag string) {
		out = append(out, mention{fmt.Sprintf("%s:%d", file, l.n), cited, path, frag})
	}
	for _, l := range lines {
		if l.inFence {
			continue
		}
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(l.text, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(l.text); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			if strings.Contains(tg, "://") || strings.HasPrefix(tg, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(tg, "#")
			if path == "" {
				add(l, tg, filepath.Join(root, filepath.FromSlash(file)), frag)
				continue
			}
			add(l, tg, filepath.Join(dir, filepath.FromSlash(path)), frag)
		}
		// Paths in code spans, and docs/ paths outside them.
		prose := codeSpan.ReplaceAllString(l.text, " ")
		for _, m := range codeSpan.FindAllStringSubmatch(l.text, -1) {
			for _, tok := range strings.FieldsFunc(m[1], func(r rune) bool {
				return unicode.IsSpace(r) || r == '=' || r == ','
			}) {
				tok = trimToken(tok)
				first, _, hasSlash := strings.Cut(tok, "/")
				switch {
				case hasSlash && rootDirs[first]:
					add(l, tok, filepath.Join(root, filepath.FromSlash(tok)), "")
				case hasSlash && first == "measurements" && strings.HasPrefix(file, "docs/"):
					add(l, tok, filepath.Join(dir, filepath.FromSlash(tok)), "")
				case !hasSlash && strings.HasSuffix(tok, ".md") && strings.HasPrefix(file, "docs/"):
					add(l, tok, filepath.Join(dir, tok), "")
				}
			}
		}
		for _, m := range bareDocs.FindAllStringSubmatch(inlineLink.ReplaceAllString(prose, " "), -1) {
			tok := trimToken(m[1])
			add(l, tok, filepath.Join(root, filepath.FromSlash(tok)), "")
		}
	}
	return out
}

// TestCitedPathsExist: every file, directory and heading the docs point to
// is in the repository.
func TestCitedPathsExist(t *testing.T) {
	root := repoRoot(t)
	cache := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		a := anchors(readLines(t, path))
		cache[path] = a
		return a
	}
	checked := 0
	for _, file := range docFiles(t, root) {
		lines := readLines(t, filepath.Join(root, filepath.FromSlash(file)))
		for _, m := range mentions(root, file, lines) {
			checked++
			if !exists(m.path) {
				t.Errorf("%s: %s does not exist", m.where, m.cited)
				continue
			}
			if m.frag == "" {
				continue
			}
			if !strings.HasSuffix(m.path, ".md") {
				continue
			}
			if !headings(m.path)[m.frag] {
				t.Errorf("%s: %s: no heading with the anchor #%s", m.where, m.cited, m.frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no path to check: the patterns no longer match the docs")
	}
	t.Logf("%d citations checked", checked)
}

// TestNoIssueNumbers: README.md, docs/*.md and the measurements' index
// speak to users, who cannot look an issue number up; history belongs in
// CHANGELOG.md. Raw outputs under docs/measurements may quote commit
// messages and are not checked.
func TestNoIssueNumbers(t *testing.T) {
	root := repoRoot(t)
	files := []string{"README.md", "docs/measurements/README.md"}
	top, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range top {
		files = append(files, "docs/"+filepath.Base(p))
	}
	sort.Strings(files)
	for _, file := range files {
		path := filepath.Join(root, filepath.FromSlash(file))
		if _, err := os.Stat(path); err != nil {
			if file == "docs/measurements/README.md" {
				t.Errorf("%s is missing: the measurements need their index", file)
			}
			continue
		}
		for _, l := range readLines(t, path) {
			for _, m := range issueRef.FindAllString(l.text, -1) {
				t.Errorf("%s:%d: names an issue (%q); say it in plain words", file, l.n, m)
			}
		}
	}
}

func TestAnchor(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"The Vulkan layer (`layer/`, `framescope run`)", "the-vulkan-layer-layer-framescope-run"},
		{"A performance gate in CI", "a-performance-gate-in-ci"},
		{"Work, not only time", "work-not-only-time"},
		{"The application's Vulkan, as it made it", "the-applications-vulkan-as-it-made-it"},
		{"snake_case and-dash", "snake_case-and-dash"},
	} {
		if got := anchorOf(c.heading); got != c.want {
			t.Errorf("anchorOf(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestIssuePattern(t *testing.T) {
	for s, want := range map[string]bool{
		"Not done yet (issue 36): a": true,
		"#the-vulkan-layer-issue-36": true,
		"(issue37)":                  true,
		"see issues #12":             true,
		"issue #4":                   true,
		"issued = delivered + open":  false,
		"the issue's acceptance":     false,
	} {
		if got := issueRef.MatchString(s); got != want {
			t.Errorf("issueRef.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}
