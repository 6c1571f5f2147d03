//go:build race

package record

// raceOn is set under the race detector, which makes the recorder about
// ten times slower: the long runs record fewer frames there.
const raceOn = true
