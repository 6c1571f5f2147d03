package history

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A history whose schema is newer than this build knows is refused, not
// written; one at this build's version opens as it is.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, dsn) // at its version: opens again
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.(*sqlStore).db.ExecContext(ctx, `UPDATE framescope_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("a schema at version 99 opened: %v", err)
	}
}
