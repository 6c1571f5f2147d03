//go:build !race

package live

const raceOn = false
