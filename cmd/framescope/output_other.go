//go:build !linux

package main

import (
	"errors"
	"os"
)

var errNoAnonymous = errors.New("no O_TMPFILE")

// openAnonymous is Linux's only: elsewhere the file has a name throughout.
func openAnonymous(dir string) (*os.File, error) { return nil, errNoAnonymous }

func linkAnonymous(f *os.File, dir, prefix string) (string, error) { return "", errNoAnonymous }
