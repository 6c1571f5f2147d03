package perfettopb

// framescope_trace.pb.go is generated from framescope_trace.proto by protoc and protoc-gen-go at
// the version go.mod requires (built from the module cache, so nothing has
// to be installed but protoc). TestGeneratedIsFresh fails when it is stale.
//go:generate go run ./internal/protogen -out .
