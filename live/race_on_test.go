//go:build race

package live

// raceOn: the race detector slows the long tests, which run shorter.
const raceOn = true
