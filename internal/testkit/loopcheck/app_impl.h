// The application's state, shared by its C files.
#ifndef LOOPCHECK_APP_IMPL_H
#define LOOPCHECK_APP_IMPL_H

#include "app.h"

#define LC_WORK (16u << 20) // bytes of the work buffer

struct lc_app {
	lc_config cfg;
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
	VkPhysicalDevice physical;
	VkDevice device;
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	int debug_utils, host_reset, calibrated;
	lc_queue queues[64];
	int nqueues;
	VkBuffer work;
	VkDeviceMemory memory;
	// With cfg.pipeline_stats: the feature enabled, and the compute
	// pipeline of cfg.count_spirv that lc_dispatch runs.
	int pipeline_stats;
	uint32_t *count_spirv;
	VkPipelineLayout count_layout;
	VkPipeline count;
	// Enabled where offered and asked for (lc_config): timeline
	// semaphores (Vulkan 1.2), VK_KHR_synchronization2 and
	// VK_KHR_dynamic_rendering, with their commands.
	int timeline, sync2, rendering;
	int use_sync2; // submissions and barriers through synchronization2 (lc_use_sync2)
	PFN_vkQueueSubmit2KHR submit2;
	PFN_vkCmdPipelineBarrier2KHR barrier2;
	PFN_vkCmdBeginRenderingKHR begin_rendering;
	PFN_vkCmdEndRenderingKHR end_rendering;
};


int lc_fail(char *err, size_t len, const char *what, VkResult r);
const char *lc_device_ext(VkPhysicalDevice pd, const char *a, const char *b);

#endif
