package demo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// safeVulkanGo are the vulkan-go functions and conversions the demo may
// call directly. The others copy slices (or structs holding slices) into C
// memory that a finalizer frees, possibly while the driver reads it: those
// go through internal/vk (vk.Graphics, Device.QueueSubmit).
var safeVulkanGo = map[string]bool{
	// Scalars and handles only.
	"BindBufferMemory": true, "BindImageMemory": true, "CmdBindPipeline": true, "CmdDraw": true, "CmdDispatch": true,
	"CmdEndRenderPass": true, "CmdResetQueryPool": true, "CmdWriteTimestamp": true, "DeviceWaitIdle": true,
	"EndCommandBuffer": true, "ResetCommandBuffer": true, "UnmapMemory": true, "MapMemory": true,
	"DestroyBuffer": true, "DestroyCommandPool": true, "DestroyFence": true, "DestroyFramebuffer": true,
	"DestroyImage": true, "DestroyImageView": true, "DestroyPipeline": true, "DestroyPipelineLayout": true,
	"DestroyQueryPool": true, "DestroyRenderPass": true, "DestroyShaderModule": true, "FreeMemory": true,
	// Raw pointers, and handle slices passed as they are (Go memory
	// without Go pointers, pinned for the call).
	"CmdPushConstants": true, "GetQueryPoolResults": true, "WaitForFences": true, "ResetFences": true,
	"CmdBindVertexBuffers": true, "AllocateCommandBuffers": true,
	// Structs without slice fields (their C copies leak; nothing frees them),
	// or whose slices are nil here (BufferCreateInfo and ImageCreateInfo's
	// queue families, CommandBufferBeginInfo's inheritance info).
	"AllocateMemory": true, "BeginCommandBuffer": true, "CreateBuffer": true, "CreateCommandPool": true,
	"CreateFence": true, "CreateImage": true, "CreateImageView": true, "CreateQueryPool": true,
	"GetBufferMemoryRequirements": true, "GetImageMemoryRequirements": true, "GetPhysicalDeviceMemoryProperties": true,
	// Not Vulkan calls.
	"Error": true, "AccessFlags": true, "BufferUsageFlags": true, "CommandBufferUsageFlags": true,
	"CommandPoolCreateFlags": true, "CullModeFlags": true, "DeviceSize": true, "ImageAspectFlags": true,
	"ImageUsageFlags": true, "MemoryPropertyFlags": true, "PipelineStageFlags": true, "QueryResultFlags": true,
	"ShaderStageFlags": true,
}

// unsafeCalls lists the calls to vulkan-go (imported as vkg) in src that
// safeVulkanGo does not allow.
func unsafeCalls(t *testing.T, name, src string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "vkg" {
				if !safeVulkanGo[sel.Sel.Name] {
					out = append(out, sel.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}

func TestUnsafeCallsChecker(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"safe", `vkg.CmdDraw(cmd, 3, 1, 0, 0); _ = vkg.PipelineStageFlags(1)`, nil},
		{"submit", `vkg.QueueSubmit(q, 1, si, f)`, []string{"QueueSubmit"}},
		{"nested", `f(vkg.CmdPipelineBarrier(cmd), vkg.CreateRenderPass(d, &ci, nil, &rp))`,
			[]string{"CmdPipelineBarrier", "CreateRenderPass"}},
		{"other package", `other.QueueSubmit(q)`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unsafeCalls(t, tc.name+".go", "package p\nfunc _() {\n"+tc.body+"\n}\n")
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOnlySafeVulkanGoCalls reads the demo's sources: none may call a
// vulkan-go function that marshals slices.
func TestOnlySafeVulkanGoCalls(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if bad := unsafeCalls(t, name, string(src)); len(bad) > 0 {
			t.Errorf("%s calls vulkan-go's %q: use internal/vk's wrappers", name, bad)
		}
	}
	if n == 0 {
		t.Fatal("no sources read")
	}
}
