// Command apicensus counts the exported names (types, funcs, methods of
// exported types, consts, vars) and exported struct fields of the public
// library packages, over their non-test files, for issue 24's bound:
//
//	go run ./internal/cmd/apicensus clock export/chrome export/perfetto export/pprof live profiler profiler/benchgpu timeline
//
// With -v first, it also lists each name and, for a struct type, its count
// of exported fields.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	tn, tf := 0, 0
	args := os.Args[1:]
	verbose := len(args) > 0 && args[0] == "-v"
	if verbose {
		args = args[1:]
	}
	say := func(dir, name string, fields int) {
		if verbose {
			fmt.Printf("  %s.%s %d\n", filepath.Clean(dir), name, fields)
		}
	}
	for _, dir := range args {
		fs := token.NewFileSet()
		pkgs, err := parser.ParseDir(fs, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			panic(err)
		}
		n, f := 0, 0
		for _, p := range pkgs {
			for _, file := range p.Files {
				for _, d := range file.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						if d.Name.IsExported() && (d.Recv == nil || recvExported(d.Recv)) {
							n++
							say(dir, d.Name.Name, 0)
						}
					case *ast.GenDecl:
						for _, s := range d.Specs {
							switch s := s.(type) {
							case *ast.TypeSpec:
								if s.Name.IsExported() {
									n++
									f += fields(s.Type)
									say(dir, s.Name.Name, fields(s.Type))
								}
							case *ast.ValueSpec:
								for _, id := range s.Names {
									if id.IsExported() {
										n++
										say(dir, id.Name, 0)
									}
								}
							}
						}
					}
				}
			}
		}
		fmt.Printf("%-30s names %4d fields %4d\n", filepath.Clean(dir), n, f)
		tn += n
		tf += f
	}
	fmt.Printf("%-30s names %4d fields %4d\n", "total", tn, tf)
}

func recvExported(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func fields(t ast.Expr) int {
	st, ok := t.(*ast.StructType)
	if !ok {
		return 0
	}
	n := 0
	for _, fl := range st.Fields.List {
		if len(fl.Names) == 0 {
			continue
		}
		for _, id := range fl.Names {
			if id.IsExported() {
				n++
			}
		}
	}
	return n
}
