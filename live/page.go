package live

import _ "embed"

// pageHTML is the page /debug/framescope/ serves: one document, its
// script and style inline.
//
//go:embed page.html
var pageHTML []byte
