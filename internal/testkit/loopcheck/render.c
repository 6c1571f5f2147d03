// Dynamic rendering (VK_KHR_dynamic_rendering): an instance with no
// attachments, which zones may be recorded inside, as a renderer's draws
// are.
#include "app_impl.h"

void lc_begin_rendering(lc_app *a, VkCommandBuffer c) {
	VkRenderingInfoKHR ri = {VK_STRUCTURE_TYPE_RENDERING_INFO_KHR};
	ri.renderArea.extent.width = 16;
	ri.renderArea.extent.height = 16;
	ri.layerCount = 1;
	a->begin_rendering(c, &ri);
}

void lc_end_rendering(lc_app *a, VkCommandBuffer c) { a->end_rendering(c); }
