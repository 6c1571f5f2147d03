// Package stats holds the statistics Framescope's CLI reports and tests:
// order statistics of duration samples (Summarize, Quantile, QuantileSE),
// robust location and spread (HodgesLehmann, MAD, MeanAD), the
// Mann-Whitney U rank test (MannWhitney), and the permutation test over
// runs with a family-wise level (MaxT) that `framescope diff` gates on;
// BinomialUpper bounds event counts in tests.
package stats
