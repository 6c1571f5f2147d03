package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vulkan-go's functions and conversions that the example may call anywhere:
// they take scalars and handles, handle slices passed as they are, or
// structs whose slices are nil here (their C copies are never freed, so no
// finalizer can free them during the call).
var anywhere = map[string]bool{
	"SetDefaultGetInstanceProcAddr": true, "Init": true, "InitInstance": true, "GetDeviceQueue": true,
	"CreateDebugReportCallback": true, "CreateFence": true, "CreateCommandPool": true, "AllocateCommandBuffers": true,
	"CreateBuffer": true, "GetBufferMemoryRequirements": true, "AllocateMemory": true, "BindBufferMemory": true,
	"WaitForFences": true, "ResetFences": true, "ResetCommandBuffer": true, "BeginCommandBuffer": true,
	"CmdFillBuffer": true, "EndCommandBuffer": true, "DeviceWaitIdle": true,
	"DestroyFence": true, "DestroyBuffer": true, "FreeMemory": true, "DestroyCommandPool": true,
	"DestroyDevice": true, "DestroyDebugReportCallback": true, "DestroyInstance": true,
	// -bound's (bound.go): its own timestamps into a pData of plain Go memory.
	"GetPhysicalDeviceProperties": true, "CreateQueryPool": true, "DestroyQueryPool": true,
	"CmdResetQueryPool": true, "CmdWriteTimestamp": true, "GetQueryPoolResults": true,
	// Not Vulkan calls.
	"Error": true, "MakeVersion": true, "ToString": true, "QueueFlags": true, "DebugReportFlags": true,
	"FenceCreateFlags": true, "CommandPoolCreateFlags": true, "DeviceSize": true, "BufferUsageFlags": true,
	"CommandBufferUsageFlags": true, "PipelineStageFlags": true, "AccessFlags": true, "QueryResultFlags": true,
}

// vulkan-go's functions that copy a slice argument, or a struct holding
// slices, into C memory that a finalizer may free during the call: only
// under noGC (enumerate calls its function under noGC).
var underNoGC = map[string]bool{
	"CreateInstance": true, "CreateDevice": true, "QueueSubmit": true, "EnumeratePhysicalDevices": true,
	"GetPhysicalDeviceQueueFamilyProperties": true, "EnumerateDeviceExtensionProperties": true,
	"CmdPipelineBarrier": true,
}

// TestSources checks what a user copies: the example imports nothing under
// internal/, and calls each vulkan-go function where it is safe to.
func TestSources(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.Contains(p, "/internal/") || strings.HasPrefix(p, "internal/") {
				t.Errorf("%s imports %s: the example may use public packages only", fset.Position(imp.Pos()), p)
			}
		}
		var walk func(n ast.Node, guarded bool)
		walk = func(n ast.Node, guarded bool) {
			ast.Inspect(n, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "noGC" || id.Name == "enumerate") {
					for _, a := range call.Args {
						walk(a, true)
					}
					return false
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "vk" {
						switch fn := sel.Sel.Name; {
						case anywhere[fn]:
						case underNoGC[fn] && !guarded:
							t.Errorf("%s: vk.%s outside noGC: vulkan-go may free its C copy during the call", fset.Position(call.Pos()), fn)
						case !underNoGC[fn]:
							t.Errorf("%s: vk.%s: not classified in source_test.go; read its vulkan-go source", fset.Position(call.Pos()), fn)
						}
					}
				}
				return true
			})
		}
		walk(f, false)
	}
	if checked < 2 {
		t.Errorf("checked %d source files; want main.go and vulkan.go", checked)
	}
}
