package history

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A writer's SQLite file in a directory that is not there is an error
// that says the directory does not exist, naming it: not SQLite's "out
// of memory (14)". The writer makes the file, not its directories.
func TestWriterMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nonexistent")
	_, err := Open(context.Background(), "sqlite:"+filepath.Join(dir, "x.db"), Options{})
	if err == nil || !strings.Contains(err.Error(), "directory "+dir+" does not exist") || strings.Contains(err.Error(), "out of memory") {
		t.Errorf("a file in a missing directory: %v", err)
	}
}
