package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknown is a testbed or branch that names no commit of the history:
// a typo, most often, which a check must not take for a history too
// short to say anything.
var ErrUnknown = errors.New("history: no commit")

// maxNames bounds the names an ErrUnknown lists.
const maxNames = 20

// unknown is the error of a testbed and branch with no commit: the
// testbed's branches where it has commits, else the history's testbeds.
func (s *sqlStore) unknown(ctx context.Context, tx *sql.Tx, testbed, branch string) error {
	branches, err := names(ctx, tx, "branch", `FROM commits WHERE testbed = `+s.d.arg(1), testbed)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if branches != "" {
		return fmt.Errorf("%w of branch %q on testbed %q; its branches: %s", ErrUnknown, branch, testbed, branches)
	}
	testbeds, err := names(ctx, tx, "testbed", `FROM commits`)
	switch {
	case err != nil:
		return fmt.Errorf("history: %w", err)
	case testbeds == "":
		return fmt.Errorf("%w on testbed %q: the history holds none yet (history add records them)", ErrUnknown, testbed)
	}
	return fmt.Errorf("%w on testbed %q; the history's testbeds: %s", ErrUnknown, testbed, testbeds)
}

// names lists the distinct values of column in the rows that from (a
// FROM clause) selects: in order, quoted, the first maxNames and how many
// there are; "" where there are none.
func names(ctx context.Context, tx *sql.Tx, column, from string, args ...any) (string, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT `+column+`) `+from, args...).Scan(&n); err != nil || n == 0 {
		return "", err
	}
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT DISTINCT %[1]s %[2]s ORDER BY %[1]s LIMIT %[3]d`, column, from, maxNames), args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var quoted []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return "", err
		}
		quoted = append(quoted, fmt.Sprintf("%q", name))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	list := strings.Join(quoted, ", ")
	if n > len(quoted) {
		list += fmt.Sprintf(" (the first %d of %d)", len(quoted), n)
	}
	return list, nil
}
