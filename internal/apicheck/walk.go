package apicheck

import (
	"fmt"
	"go/token"
	"go/types"
	"strings"
)

// walker collects the lines of one package. Types from other packages are
// written with their package's name ("vulkan.CommandBuffer"), as in Go's
// api files; parameter names are left out, since changing them changes no
// caller.
type walker struct {
	pkg   *types.Package
	head  string // "pkg NAME, ", the start of every line
	lines []string
}

// packageLines returns the lines of pkg's exported names, headed with name.
func packageLines(pkg *types.Package, name string) []string {
	w := &walker{pkg: pkg, head: "pkg " + name + ", "}
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		if token.IsExported(n) {
			w.object(scope.Lookup(n))
		}
	}
	return w.lines
}

func (w *walker) emit(format string, args ...any) {
	w.lines = append(w.lines, w.head+fmt.Sprintf(format, args...))
}

func (w *walker) object(obj types.Object) {
	switch obj := obj.(type) {
	case *types.Const:
		w.emit("const %s %s", obj.Name(), w.constType(obj.Type()))
		w.emit("const %s = %s", obj.Name(), obj.Val().ExactString())
	case *types.Var:
		w.emit("var %s %s", obj.Name(), w.typ(obj.Type()))
	case *types.Func:
		w.emit("func %s%s", obj.Name(), w.signature(obj.Type().(*types.Signature)))
	case *types.TypeName:
		w.typeName(obj)
	}
}

// constType writes an untyped constant's type as Go's api files do
// ("ideal-int"), so that giving it a type later shows as a change.
func (w *walker) constType(t types.Type) string {
	if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return "ideal-" + strings.TrimPrefix(b.Name(), "untyped ")
	}
	return w.typ(t)
}

// typeName writes a type's line, then its fields or interface methods,
// then the methods of its method sets.
func (w *walker) typeName(tn *types.TypeName) {
	if tn.IsAlias() {
		rhs := tn.Type()
		if a, ok := rhs.(*types.Alias); ok {
			rhs = a.Rhs()
		}
		w.emit("type %s = %s", tn.Name(), w.typ(rhs))
		return
	}
	named := tn.Type().(*types.Named)
	decl := tn.Name() + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit("type %s struct", decl)
		w.fields(tn.Name(), u, map[*types.Struct]bool{})
	case *types.Interface:
		w.iface(decl, tn.Name(), u)
		return // its methods are the interface's
	default:
		w.emit("type %s %s", decl, w.typ(u))
	}
	w.methods(named)
}

// fields writes a struct's exported fields; an embedded one as "embedded
// T". An embedded unexported struct's exported fields are promoted, so
// they are listed as the outer struct's own; seen stops a cycle of them.
func (w *walker) fields(name string, s *types.Struct, seen map[*types.Struct]bool) {
	seen[s] = true
	for i := range s.NumFields() {
		f := s.Field(i)
		switch {
		case f.Embedded() && !f.Exported():
			if inner, ok := derefStruct(f.Type()); ok && !seen[inner] {
				w.fields(name, inner, seen)
			}
		case !f.Exported():
		case f.Embedded():
			w.emit("type %s struct, embedded %s", name, w.typ(f.Type()))
		default:
			w.emit("type %s struct, %s %s", name, f.Name(), w.typ(f.Type()))
		}
	}
}

// derefStruct returns the struct under t or under the type t points to.
func derefStruct(t types.Type) (*types.Struct, bool) {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	s, ok := t.Underlying().(*types.Struct)
	return s, ok
}

// methods writes the exported methods of *T's method set, promoted ones
// included, each with the receiver it can be called on: T where T's own
// method set has it, *T where only *T's does.
func (w *walker) methods(named *types.Named) {
	values := types.NewMethodSet(named)
	all := types.NewMethodSet(types.NewPointer(named))
	for i := range all.Len() {
		m := all.At(i).Obj()
		if !m.Exported() {
			continue
		}
		recv := "*" + w.typ(named)
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			recv = w.typ(named)
		}
		w.emit("method (%s) %s%s", recv, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
}

// iface writes an interface type's summary line and one line for each of
// its methods (embedded ones included) and each type term it embeds.
func (w *walker) iface(decl, name string, it *types.Interface) {
	var names []string
	unexported := false
	for i := range it.NumMethods() {
		m := it.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		names = append(names, m.Name())
		w.emit("type %s interface, %s%s", name, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
	if unexported {
		names = append(names, "unexported methods")
	}
	for i := range it.NumEmbeddeds() {
		if e := it.EmbeddedType(i); !types.IsInterface(e) {
			w.emit("type %s interface, %s", name, w.typ(e))
		}
	}
	if len(names) == 0 {
		w.emit("type %s interface {}", decl)
		return
	}
	w.emit("type %s interface { %s }", decl, strings.Join(names, ", "))
}
