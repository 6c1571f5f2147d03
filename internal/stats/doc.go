// Package stats holds the statistics Framescope's CLI reports and tests:
// order statistics of duration samples (Summarize) and the Mann-Whitney U
// rank test (MannWhitney) that `framescope diff` uses to tell a real
// regression from noise.
package stats
