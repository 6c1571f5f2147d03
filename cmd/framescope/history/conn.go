package history

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ConnError is the database connection lost midway: the server stopped
// or restarted, the network cut, the session ended by an administrator.
// It is the database's failure, not the input's. A transaction that did
// not commit is undone; one lost as it committed may have gone through,
// so the advice is to run again, which records nothing twice.
type ConnError struct {
	DB  string // the database, its password left out
	Err error  // what the driver saw
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("history: the connection to the database %s was lost (%v): the database's failure, "+
		"not the input's; run again (add records nothing twice)", e.DB, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// connLost is err as a *ConnError where the connection was lost, else
// err.
func (s *sqlStore) connLost(err error) error {
	if cause := lostCause(err); cause != nil {
		return &ConnError{DB: s.dsn, Err: cause}
	}
	return err
}

// lostCause is the error in err's chain that says the connection was
// lost, nil where none does: the server's word that it ended the
// session (SQLSTATE class 08, connection exception, or 57P01-57P03,
// shut down), a stream cut short, or a network error.
func lostCause(err error) error {
	var pe *pgconn.PgError
	var ne net.Error
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil // the caller's own end (a deadline satisfies net.Error)
	case errors.As(err, &pe):
		if strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" {
			return pe
		}
		return nil
	case errors.As(err, &ne):
		return ne
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, driver.ErrBadConn):
		for errors.Unwrap(err) != nil && strings.HasPrefix(err.Error(), "history: ") {
			err = errors.Unwrap(err) // the driver's words, not the store's wrapping
		}
		return err
	}
	return nil
}
