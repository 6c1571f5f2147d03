// Package apicheck lists the exported API of the module's public packages,
// one line per name in the form of the Go repository's api/go1.*.txt files
// ("pkg profiler, func WrapDevice(Existing) (*Device, error)"), so that a
// test can hold the module to a recorded list (api/framescope.txt) and a
// change to the API is a reviewed edit of that file, not an accident.
//
// It reads the packages' compiled export data, which `go list -export`
// builds, with go/types: it needs only the standard library and the go
// command, and a package built with cgo reads like any other.
package apicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Package is a public package of the module: its import path and its
// directory.
type Package struct {
	ImportPath, Dir string
}

// listed is one package as `go list -json` reports it.
type listed struct {
	ImportPath, Name, Dir, Export string
	GoFiles, CgoFiles             []string
	Module                        *struct{ Path string }
	DepOnly                       bool // listed by -deps only, not named
}

// PublicPackages lists the packages under the module at dir that other
// modules can import: neither internal, nor main, nor under testdata
// (which ./... leaves out already), nor made of tests alone.
func PublicPackages(dir string) ([]Package, error) {
	pkgs, err := goList(dir, "./...")
	if err != nil {
		return nil, err
	}
	var public []Package
	for _, p := range pkgs {
		if p.Name == "main" || isInternal(p.ImportPath) || len(p.GoFiles)+len(p.CgoFiles) == 0 {
			continue
		}
		public = append(public, Package{ImportPath: p.ImportPath, Dir: p.Dir})
	}
	return public, nil
}

// isInternal says whether an import path has an element named internal,
// which the go command keeps other modules from importing.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// Generate returns the API lines of the packages named by patterns (as the
// go command, run in dir, reads them), sorted and without duplicates.
func Generate(dir string, patterns ...string) ([]string, error) {
	deps, err := goList(dir, append([]string{"-export", "-deps"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	exports := make(map[string]string, len(deps))
	for _, p := range deps {
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("go list gave no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	var lines []string
	for _, p := range deps {
		if p.DepOnly {
			continue
		}
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			return nil, err
		}
		lines = append(lines, packageLines(pkg, shortPath(p))...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// shortPath is a package's import path within its module ("profiler"),
// which reads better than the whole path on every line.
func shortPath(p listed) string {
	if p.Module == nil || p.ImportPath == p.Module.Path {
		return p.ImportPath
	}
	return strings.TrimPrefix(p.ImportPath, p.Module.Path+"/")
}

// goList runs `go list -json` in dir and decodes the packages it prints.
func goList(dir string, args ...string) ([]listed, error) {
	args = append([]string{"list", "-json=ImportPath,Name,Dir,Export,GoFiles,CgoFiles,Module,DepOnly"}, args...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}
