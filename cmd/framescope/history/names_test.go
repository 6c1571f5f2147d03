package history_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// A testbed or a branch of no commit is an error, ErrUnknown, that lists
// what the history holds: the testbed's branches, or the testbeds, at
// most 20 of them, saying how many there are.
func TestUnknownNames(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		w := open(t, dsn)
		rng := rand.New(rand.NewPCG(7, 7))
		add := func(testbed, branch string) {
			t.Helper()
			c := history.Commit{Testbed: testbed, Branch: branch, SHA: "c", Seq: 1}
			if _, err := w.Add(ctx, c, []history.Run{run(rng, testbed+"/"+branch, 1)}); err != nil {
				t.Fatal(err)
			}
		}
		add("h100", "main")
		add("h100", "dev")
		add("lavapipe", "main")
		for i := range 25 {
			add("many", fmt.Sprintf("b%02d", i))
		}
		r, err := history.Open(ctx, dsn, history.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, c := range []struct{ testbed, branch, want string }{
			{"H100", "main", `no commit on testbed "H100"; the history's testbeds: "h100", "lavapipe", "many"`},
			{"h100", "mian", `no commit of branch "mian" on testbed "h100"; its branches: "dev", "main"`},
			{"many", "main", `its branches: "b00", "b01", "b02", "b03", "b04", "b05", "b06", "b07", "b08", "b09", "b10", ` +
				`"b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19" (the first 20 of 25)`},
		} {
			h, err := r.Load(ctx, c.testbed, c.branch, 10)
			if !errors.Is(err, history.ErrUnknown) || !strings.Contains(err.Error(), c.want) || len(h.Commits) != 0 {
				t.Errorf("%s on %s: %d commits, %v\nwant: %s", c.branch, c.testbed, len(h.Commits), err, c.want)
			}
		}
		if h, err := r.Load(ctx, "h100", "dev", 10); err != nil || len(h.Commits) != 1 {
			t.Errorf("a branch that is there: %d commits, %v", len(h.Commits), err)
		}
	})
}

// A NUL in a name is refused as what it is, a NUL, naming the rule: not
// as text that is not UTF-8, which it is. On both stores, as the
// database is never asked.
func TestNULInName(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		w := open(t, dsn)
		rng := rand.New(rand.NewPCG(9, 9))
		r := run(rng, "r", 1)
		r.Points[0].Name = "z\x00ero"
		for what, c := range map[string]struct {
			c    history.Commit
			runs []history.Run
		}{
			"a zone":   {history.Commit{Testbed: "t", Branch: "main", SHA: "c", Seq: 1}, []history.Run{r}},
			"a commit": {history.Commit{Testbed: "t", Branch: "main", SHA: "c\x00", Seq: 1}, []history.Run{run(rng, "a", 1)}},
		} {
			_, err := w.Add(ctx, c.c, c.runs)
			if err == nil || !strings.Contains(err.Error(), `holds a NUL (\x00), a control character`) || strings.Contains(err.Error(), "UTF-8") {
				t.Errorf("%s with a NUL: %v", what, err)
			}
		}
	})
}
