// Package perfettopb holds Framescope's subset of Perfetto's trace format:
// framescope_trace.proto, with Perfetto's field numbers, and the Go code
// protoc-gen-go generates from it.
//
// The wire format is what must match Perfetto, not the names: the messages
// keep Perfetto's message names but live in the proto package
// framescope.perfettopb, so that a program linking both this module and
// Perfetto's own Go protos registers no name twice in the global protobuf
// registry (TestRegistersNoPerfettoNames checks it).
//
// The Perfetto writer in export/perfetto encodes packets by hand with
// protowire, for speed; these generated types are what its tests and
// benchmarks check it against. Run `go generate ./internal/perfettopb`
// after editing the .proto file.
package perfettopb
