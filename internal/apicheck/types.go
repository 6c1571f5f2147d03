package apicheck

import (
	"fmt"
	"go/types"
	"strings"
)

// This file writes types the way api lines show them: like Go source, but
// with no parameter names and with other packages' types qualified by
// package name. go/types' own TypeString keeps parameter names, which
// would make renaming a parameter look like an API change.

func (w *walker) typ(t types.Type) string {
	var b strings.Builder
	w.write(&b, t)
	return b.String()
}

func (w *walker) signature(sig *types.Signature) string {
	var b strings.Builder
	w.writeSignature(&b, sig)
	return b.String()
}

func (w *walker) typeParams(list *types.TypeParamList) string {
	var b strings.Builder
	w.writeTypeParams(&b, list)
	return b.String()
}

func (w *walker) write(b *strings.Builder, t types.Type) {
	switch t := t.(type) {
	case *types.Named:
		w.writeName(b, t.Obj(), t.TypeArgs(), t.TypeParams())
	case *types.Alias:
		w.writeName(b, t.Obj(), t.TypeArgs(), t.TypeParams())
	case *types.Pointer:
		b.WriteString("*")
		w.write(b, t.Elem())
	case *types.Slice:
		b.WriteString("[]")
		w.write(b, t.Elem())
	case *types.Array:
		fmt.Fprintf(b, "[%d]", t.Len())
		w.write(b, t.Elem())
	case *types.Map:
		b.WriteString("map[")
		w.write(b, t.Key())
		b.WriteString("]")
		w.write(b, t.Elem())
	case *types.Chan:
		w.writeChan(b, t)
	case *types.Signature:
		b.WriteString("func")
		w.writeSignature(b, t)
	case *types.Struct:
		w.writeStruct(b, t)
	case *types.Interface:
		w.writeInterface(b, t)
	case *types.Union:
		w.writeUnion(b, t)
	default: // basic types and type parameters
		b.WriteString(types.TypeString(t, nil))
	}
}

// writeName writes a named type or alias: qualified when it is another
// package's, with its type arguments, or its parameters where it has none.
func (w *walker) writeName(b *strings.Builder, obj *types.TypeName, args *types.TypeList, params *types.TypeParamList) {
	if obj.Pkg() != nil && obj.Pkg() != w.pkg {
		b.WriteString(obj.Pkg().Name() + ".")
	}
	b.WriteString(obj.Name())
	var list []types.Type
	for i := range args.Len() {
		list = append(list, args.At(i))
	}
	if args.Len() == 0 {
		for i := range params.Len() {
			list = append(list, params.At(i))
		}
	}
	if len(list) > 0 {
		w.writeList(b, "[", list, "]")
	}
}

func (w *walker) writeList(b *strings.Builder, open string, list []types.Type, close string) {
	b.WriteString(open)
	for i, t := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		w.write(b, t)
	}
	b.WriteString(close)
}

func (w *walker) writeChan(b *strings.Builder, t *types.Chan) {
	elem := w.typ(t.Elem())
	switch t.Dir() {
	case types.SendOnly:
		b.WriteString("chan<- " + elem)
	case types.RecvOnly:
		b.WriteString("<-chan " + elem)
	default:
		if strings.HasPrefix(elem, "<-chan") {
			elem = "(" + elem + ")" // chan <-chan T would read as chan<- chan T
		}
		b.WriteString("chan " + elem)
	}
}

// writeSignature writes "[P C](T1, ...T2) R" or "(T) (R1, R2)".
func (w *walker) writeSignature(b *strings.Builder, sig *types.Signature) {
	w.writeTypeParams(b, sig.TypeParams())
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if s, ok := t.(*types.Slice); ok && sig.Variadic() && i == params.Len()-1 {
			b.WriteString("...")
			t = s.Elem()
		}
		w.write(b, t)
	}
	b.WriteString(")")
	results := sig.Results()
	switch results.Len() {
	case 0:
	case 1:
		b.WriteString(" ")
		w.write(b, results.At(0).Type())
	default:
		w.writeList(b, " (", tupleTypes(results), ")")
	}
}

func tupleTypes(t *types.Tuple) []types.Type {
	list := make([]types.Type, t.Len())
	for i := range list {
		list[i] = t.At(i).Type()
	}
	return list
}

func (w *walker) writeTypeParams(b *strings.Builder, list *types.TypeParamList) {
	if list.Len() == 0 {
		return
	}
	b.WriteString("[")
	for i := range list.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(list.At(i).Obj().Name() + " ")
		w.write(b, list.At(i).Constraint())
	}
	b.WriteString("]")
}

// writeStruct writes a struct type literal, with all its fields: unexported
// ones, too, are part of its identity.
func (w *walker) writeStruct(b *strings.Builder, s *types.Struct) {
	b.WriteString("struct{")
	for i := range s.NumFields() {
		if i > 0 {
			b.WriteString("; ")
		}
		if f := s.Field(i); !f.Embedded() {
			b.WriteString(f.Name() + " ")
		}
		w.write(b, s.Field(i).Type())
	}
	b.WriteString("}")
}

// writeInterface writes an interface type literal as its source reads:
// its own methods, then what it embeds. The implicit interface of a
// constraint written as a bare union ([T ~int | ~uint]) is the union.
func (w *walker) writeInterface(b *strings.Builder, it *types.Interface) {
	if it.IsImplicit() && it.NumEmbeddeds() == 1 {
		w.write(b, it.EmbeddedType(0))
		return
	}
	b.WriteString("interface{")
	for i := range it.NumExplicitMethods() {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(it.ExplicitMethod(i).Name())
		w.writeSignature(b, it.ExplicitMethod(i).Type().(*types.Signature))
	}
	for i := range it.NumEmbeddeds() {
		if i > 0 || it.NumExplicitMethods() > 0 {
			b.WriteString("; ")
		}
		w.write(b, it.EmbeddedType(i))
	}
	b.WriteString("}")
}

func (w *walker) writeUnion(b *strings.Builder, u *types.Union) {
	for i := range u.Len() {
		if i > 0 {
			b.WriteString(" | ")
		}
		if u.Term(i).Tilde() {
			b.WriteString("~")
		}
		w.write(b, u.Term(i).Type())
	}
}
