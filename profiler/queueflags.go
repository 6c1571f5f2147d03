package profiler

import (
	"fmt"
	"strings"
)

// QueueFlags is what a queue family can do: Vulkan's VkQueueFlags, bit for
// bit, so that a value from the application's own
// vkGetPhysicalDeviceQueueFamilyProperties converts with QueueFlags(f).
type QueueFlags uint32

// The VkQueueFlagBits a profiler cares about or shows.
const (
	QueueGraphics      QueueFlags = 0x1   // VK_QUEUE_GRAPHICS_BIT
	QueueCompute       QueueFlags = 0x2   // VK_QUEUE_COMPUTE_BIT
	QueueTransfer      QueueFlags = 0x4   // VK_QUEUE_TRANSFER_BIT
	QueueSparseBinding QueueFlags = 0x8   // VK_QUEUE_SPARSE_BINDING_BIT
	QueueProtected     QueueFlags = 0x10  // VK_QUEUE_PROTECTED_BIT
	QueueVideoDecode   QueueFlags = 0x20  // VK_QUEUE_VIDEO_DECODE_BIT_KHR
	QueueVideoEncode   QueueFlags = 0x40  // VK_QUEUE_VIDEO_ENCODE_BIT_KHR
	QueueOpticalFlow   QueueFlags = 0x100 // VK_QUEUE_OPTICAL_FLOW_BIT_NV
)

var queueFlagNames = [...]struct {
	f    QueueFlags
	name string
}{
	{QueueGraphics, "graphics"}, {QueueCompute, "compute"}, {QueueTransfer, "transfer"},
	{QueueSparseBinding, "sparse"}, {QueueProtected, "protected"}, {QueueVideoDecode, "video-decode"},
	{QueueVideoEncode, "video-encode"}, {QueueOpticalFlow, "optical-flow"},
}

// Has reports whether f has every capability of want.
func (f QueueFlags) Has(want QueueFlags) bool { return f&want == want }

// String spells f as the traces show it: "graphics+compute+transfer", with
// unnamed bits in hex ("graphics+0x200").
func (f QueueFlags) String() string {
	var b strings.Builder
	rest := f
	for _, n := range queueFlagNames {
		if f&n.f == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('+')
		}
		b.WriteString(n.name)
		rest &^= n.f
	}
	if rest != 0 || f == 0 {
		if b.Len() > 0 {
			b.WriteByte('+')
		}
		fmt.Fprintf(&b, "%#x", uint32(rest))
	}
	return b.String()
}
