package tpcheck

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvDir names the trace processor to use: a directory made by
// scripts/fetch-trace-processor.sh, or a trace_processor_shell binary.
const EnvDir = "FRAMESCOPE_TRACE_PROCESSOR"

// EnvRequire, set to 1, turns "no trace processor" from a skip into a
// failure.
const EnvRequire = "FRAMESCOPE_REQUIRE_TP"

// wasmFiles are the files a fetched WebAssembly trace processor holds.
var wasmFiles = []string{"engine_bundle.node.js", "trace_processor.wasm"}

// processor says where a trace processor is and how to run it.
type processor struct {
	kind string // "wasm" or "shell"
	path string // the wasm directory or the shell binary
	node string // the node binary, for kind "wasm"
}

func (p processor) String() string { return p.kind + " " + p.path }

// errNotFound is returned by locate when no processor is installed; any
// other error means one was named but cannot be used.
var errNotFound = errors.New("no trace processor found")

// locate finds the trace processor by the rules in the package comment.
func locate() (processor, error) {
	if dir, ok := os.LookupEnv(EnvDir); ok && dir != "" {
		p, err := usable(dir)
		if err != nil {
			return processor{}, fmt.Errorf("%s=%s: %w", EnvDir, dir, err)
		}
		return p, nil
	}
	if shell, err := exec.LookPath("trace_processor_shell"); err == nil {
		return shellProcessor(shell)
	}
	if root, err := moduleRoot(); err == nil {
		dir := filepath.Join(root, ".cache", "trace-processor")
		if _, err := os.Stat(dir); err == nil {
			return usable(dir)
		}
	}
	return processor{}, fmt.Errorf("%w: set %s to a directory made by scripts/fetch-trace-processor.sh (make tp), or put trace_processor_shell on PATH", errNotFound, EnvDir)
}

// usable checks that path is a fetched wasm directory (with node on PATH)
// or an executable trace_processor_shell.
func usable(path string) (processor, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return processor{}, err
	}
	if !fi.IsDir() {
		if fi.Mode()&0o111 == 0 {
			return processor{}, errors.New("not a directory and not executable")
		}
		return shellProcessor(path)
	}
	for _, f := range wasmFiles {
		if _, err := os.Stat(filepath.Join(path, f)); err != nil {
			return processor{}, fmt.Errorf("incomplete trace processor directory (run make tp): %w", err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return processor{}, fmt.Errorf("node is needed to run the WebAssembly trace processor: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return processor{}, err
	}
	return processor{kind: "wasm", path: abs, node: node}, nil
}

// shellProcessor is a trace_processor_shell, driven through tp.mjs with
// --stdiod (its RPC on stdin and stdout), so node is needed there too.
func shellProcessor(shell string) (processor, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return processor{}, fmt.Errorf("node is needed to drive %s: %w", shell, err)
	}
	return processor{kind: "shell", path: shell, node: node}, nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}
