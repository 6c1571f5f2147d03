// Package compat holds the compatibility test: programs written against
// earlier versions of Framescope's public API, and the README's loop, built
// as modules outside Framescope's (testdata/*, each with its own go.mod
// that replaces Framescope with this tree) and run unmodified against the
// current code with the Khronos validation layer on, beside the current
// examples.
package compat
