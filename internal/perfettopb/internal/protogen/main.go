// Command protogen regenerates framescope_trace.pb.go: it builds protoc-gen-go at the
// version go.mod requires into a temporary directory and runs protoc with
// it, so that generation needs only protoc and the Go toolchain.
//
//	go run ./internal/protogen -out DIR   (run in the proto directory)
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	out := flag.String("out", ".", "directory to write framescope_trace.pb.go into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		return fmt.Errorf("protoc is needed (Debian: apt-get install protobuf-compiler): %w", err)
	}
	tmp, err := os.MkdirTemp("", "protogen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	plugin := filepath.Join(tmp, "protoc-gen-go")
	build := exec.Command("go", "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building protoc-gen-go: %w", err)
	}
	gen := exec.Command(protoc, "--plugin=protoc-gen-go="+plugin, "-I", ".",
		"--go_out="+out, "--go_opt=paths=source_relative", "framescope_trace.proto")
	gen.Stdout, gen.Stderr = os.Stderr, os.Stderr
	if err := gen.Run(); err != nil {
		return fmt.Errorf("protoc: %w", err)
	}
	return nil
}
