package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A name that matches nothing is a mistake, exit 2, not a history too
// short to say (exit 3): check and show (its -md, from the check's
// verdict, too) of a -db file that is not there (which they do not
// make), of a -testbed or a -branch of no commit, say so and list what
// the history holds.
func TestHistoryUnknownNames(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	for i := range 3 {
		runs := runDir(t, dir, fmt.Sprintf("c%d", i), uint64(50+i), 1, 0.01, nil)
		if code, _, errs := runCLI("history", "add", "-db", "sqlite:"+db, "-commit", fmt.Sprintf("c%d", i), "-seq", fmt.Sprint(i), "-testbed", "h100", runs); code != 0 {
			t.Fatalf("add: %s", errs)
		}
	}
	typo := filepath.Join(dir, "typo.db")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a -db file that is not there", []string{"-db", "sqlite:" + typo, "-testbed", "h100"}, "typo.db: no such file"},
		{"a -testbed of no commit", []string{"-db", "sqlite:" + db, "-testbed", "H100"}, `no commit on testbed "H100"; the history's testbeds: "h100"`},
		{"a -branch of no commit", []string{"-db", "sqlite:" + db, "-testbed", "h100", "-branch", "mian"}, `no commit of branch "mian" on testbed "h100"; its branches: "main"`},
	} {
		md := filepath.Join(dir, "comment.md")
		for _, sub := range [][]string{{"check"}, {"show"}, {"show", "-md", md}} {
			code, out, errs := runCLI(append(append([]string{"history"}, sub...), c.args...)...)
			if code != exitBadInput || !strings.Contains(errs, c.want) {
				t.Errorf("%s %s: exit %d, want %d, saying %q\n%s%s", strings.Join(sub, " "), c.name, code, exitBadInput, c.want, out, errs)
			}
		}
		if _, err := os.Stat(md); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("show -md of %s wrote %s: %v", c.name, md, err)
		}
	}
	if _, err := os.Stat(typo); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("check or show made %s: %v", typo, err)
	}
	if code, out, errs := runCLI("history", "show", "-db", "sqlite:"+db, "-testbed", "h100"); code != 0 || !strings.Contains(out, "3 commits") {
		t.Errorf("show of names that are there: exit %d\n%s%s", code, out, errs)
	}
}
