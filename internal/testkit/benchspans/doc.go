// Package benchspans generates realistic timelines for exporter tests and
// benchmarks: frames of nested CPU spans on two threads and nested GPU
// zones on two queues (one with an overflow lane), with 50 distinct names,
// flows from submissions to the zones they carried, and a counter. The
// same seed gives the same timeline, so exporters can be compared on
// identical input.
package benchspans
