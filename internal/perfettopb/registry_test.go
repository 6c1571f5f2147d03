package perfettopb

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestRegistersNoPerfettoNames fails if the generated code registers a
// file or a name that Perfetto's own Go protos register: linking both
// into one program would then fail at start-up.
func TestRegistersNoPerfettoNames(t *testing.T) {
	_ = (&Trace{}).ProtoReflect() // the package's files are registered
	files := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "framescope.") {
			return true // not ours
		}
		files++
		if fd.Path() == "protos/perfetto/trace/trace.proto" || !strings.HasPrefix(fd.Path(), "framescope_") {
			t.Errorf("file %q: want a path of our own", fd.Path())
		}
		return true
	})
	if files == 0 {
		t.Fatal("no framescope.* file registered: the check saw nothing")
	}
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if name := mt.Descriptor().FullName(); strings.HasPrefix(string(name), "perfetto.protos.") {
			t.Errorf("registered %s: Perfetto's own protos register that name", name)
		}
		return true
	})
	if got := (&TracePacket{}).ProtoReflect().Descriptor().FullName(); got != "framescope.perfettopb.TracePacket" {
		t.Errorf("TracePacket is registered as %s", got)
	}
}
