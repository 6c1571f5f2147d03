// Dynamic rendering (VK_KHR_dynamic_rendering): an instance with no
// attachments, which zones may be recorded inside, as a renderer's draws
// are.
#include "app_impl.h"

void lc_begin_rendering(lc_app *a, VkCommandBuffer c) { lc_begin_rendering_flags(a, c, 0); }

// lc_begin_rendering_flags is lc_begin_rendering with flags: with
// VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT, an instance whose
// contents are secondaries begun by lc_begin_continuing.
void lc_begin_rendering_flags(lc_app *a, VkCommandBuffer c, VkRenderingFlags flags) {
	VkRenderingInfoKHR ri = {VK_STRUCTURE_TYPE_RENDERING_INFO_KHR};
	ri.flags = flags;
	ri.renderArea.extent.width = 16;
	ri.renderArea.extent.height = 16;
	ri.layerCount = 1;
	a->begin_rendering(c, &ri);
}

void lc_end_rendering(lc_app *a, VkCommandBuffer c) { a->end_rendering(c); }

// lc_begin_continuing begins secondary c to continue an instance with no
// attachments (RENDER_PASS_CONTINUE), executable more than once at a time
// (SIMULTANEOUS_USE): twice in one primary, or by primaries pending
// together.
int lc_begin_continuing(VkCommandBuffer c) {
	VkCommandBufferInheritanceRenderingInfoKHR ir = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO_KHR};
	ir.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
	VkCommandBufferInheritanceInfo ii = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	ii.pNext = &ir;
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT | VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
	bi.pInheritanceInfo = &ii;
	return (int)vkBeginCommandBuffer(c, &bi);
}
