package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"time"

	sqlitedriver "modernc.org/sqlite"
)

// sqliteMode is how a SQLite file is opened.
type sqliteMode int

const (
	sqliteWrite     sqliteMode = iota // made where missing, in WAL mode; a transaction takes the write lock at BEGIN
	sqliteRead                        // read-only; a transaction reads one snapshot, in WAL mode taking no lock a writer waits for
	sqliteImmutable                   // read-only, without locks: a file in a directory this user cannot write
)

// SQLite's result codes the store tells apart (the low byte of an
// extended code).
const (
	sqliteBusy     = 5                     // SQLITE_BUSY: a lock another connection holds
	sqliteReadOnly = 8                     // SQLITE_READONLY
	sqliteRODir    = sqliteReadOnly | 6<<8 // SQLITE_READONLY_DIRECTORY: no -wal or -shm file can be made
)

// sqliteSource is the driver's name of the file at path, opened as mode
// says, each wait for a lock bounded by wait.
func sqliteSource(path string, mode sqliteMode, wait time.Duration) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", wait.Milliseconds()))
	switch mode {
	case sqliteWrite:
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate") // a writer takes the lock at BEGIN, not midway
	case sqliteRead, sqliteImmutable:
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
		if mode == sqliteImmutable {
			q.Set("immutable", "1")
		}
	}
	return "file:" + path + "?" + q.Encode()
}

// sqliteError is SQLite's error in err's chain, and its result code
// (0 where there is none).
func sqliteError(err error) (*sqlitedriver.Error, int) {
	var e *sqlitedriver.Error
	if errors.As(err, &e) {
		return e, e.Code()
	}
	return nil, 0
}

// openSQLiteToRead opens the file at path read-only. The file must be
// there: a reader makes none.
//
// SQLite reads a WAL-mode file, sharing the writers' locks, through its
// -wal and -shm files, making them where missing; a read-only connection
// leaves them there, this user's, which a writer of another user could
// not then write. So where they are missing and another user owns the
// file, or the directory cannot be written, the file is read as it is,
// without locks, and each Load makes sure that it did not change
// meanwhile (s.stamp). Where they are missing no writer has the file
// open.
func (s *sqlStore) openSQLiteToRead(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("no such file (check and show make no history; history add does)")
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(path + "-wal"); err != nil && !ownsFile(st) {
		return s.openImmutable(ctx, path)
	}
	err = s.connect(ctx, sqliteSource(path, sqliteRead, s.wait))
	if err == nil {
		_, _, err = s.version(ctx, s.db)
	}
	if _, code := sqliteError(err); code != sqliteRODir {
		return err
	}
	s.db.Close()
	return s.openImmutable(ctx, path)
}

// openImmutable opens the file at path to read without locks, stamped.
func (s *sqlStore) openImmutable(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	s.stamp = &fileStamp{path: path, mod: st.ModTime(), size: st.Size()}
	return s.connect(ctx, sqliteSource(path, sqliteImmutable, s.wait))
}

// fileStamp is what a file was when a reader without locks opened it.
type fileStamp struct {
	path string
	mod  time.Time
	size int64
}

// unchanged says whether the file is still as it was stamped: a reader
// without locks that read it while a writer changed it may have read
// parts of two versions.
func (f *fileStamp) unchanged() error {
	if f == nil {
		return nil
	}
	st, err := os.Stat(f.path)
	if err != nil {
		return err
	}
	if !st.ModTime().Equal(f.mod) || st.Size() != f.size {
		return fmt.Errorf("%s changed while it was read: in a directory this user cannot write, SQLite reads without locks; read again", f.path)
	}
	return nil
}
