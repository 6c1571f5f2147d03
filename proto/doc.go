// Package proto holds Framescope's subset of Perfetto's trace format:
// trace.proto, with Perfetto's field numbers, and the Go code protoc-gen-go
// generates from it.
//
// The Perfetto writer in export/perfetto encodes packets by hand with
// protowire, for speed; these generated types are what its tests and
// benchmarks check it against, and what any code that prefers convenience
// to speed can use. Run `go generate ./proto` after editing trace.proto.
package proto
