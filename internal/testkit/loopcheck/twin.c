// A second device on the application's physical device, alive beside the
// first, as an application with a device per window or per worker makes:
// one queue, one command buffer a frame, a fence.
#include "app_impl.h"

#include <stdio.h>
#include <stdlib.h>

struct lc_twin {
	VkDevice device;
	lc_queue queue;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkFence fence;
	int pending; // a submission the fence has not been waited for
};

int lc_twin_create(lc_app *a, lc_twin **out, char *err, size_t errlen) {
	if (a->nqueues == 0) {
		snprintf(err, errlen, "no queue to make a second device with");
		return -1;
	}
	lc_twin *t = calloc(1, sizeof *t);
	uint32_t family = a->queues[0].family;
	float prio = 1;
	VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
	qci.queueFamilyIndex = family;
	qci.queueCount = 1;
	qci.pQueuePriorities = &prio;
	VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
	dci.queueCreateInfoCount = 1;
	dci.pQueueCreateInfos = &qci;
	VkResult r = vkCreateDevice(a->physical, &dci, NULL, &t->device);
	if (r != VK_SUCCESS) {
		free(t);
		return lc_fail(err, errlen, "vkCreateDevice (second device)", r);
	}
	t->queue = a->queues[0];
	t->queue.index = 0;
	vkGetDeviceQueue(t->device, family, 0, &t->queue.queue);
	VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	pci.queueFamilyIndex = family;
	VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
	ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 1;
	VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	if ((r = vkCreateCommandPool(t->device, &pci, NULL, &t->pool)) != VK_SUCCESS ||
		(ai.commandPool = t->pool, r = vkAllocateCommandBuffers(t->device, &ai, &t->cmd)) != VK_SUCCESS ||
		(r = vkCreateFence(t->device, &fci, NULL, &t->fence)) != VK_SUCCESS) {
		lc_twin_destroy(t);
		return lc_fail(err, errlen, "the second device's objects", r);
	}
	*out = t;
	return 0;
}

void lc_twin_destroy(lc_twin *t) {
	if (!t) return;
	vkDeviceWaitIdle(t->device);
	if (t->fence) vkDestroyFence(t->device, t->fence, NULL);
	if (t->pool) vkDestroyCommandPool(t->device, t->pool, NULL);
	vkDestroyDevice(t->device, NULL);
	free(t);
}

VkDevice lc_twin_device(lc_twin *t) { return t->device; }
lc_queue lc_twin_queue(lc_twin *t) { return t->queue; }

int lc_twin_wait(lc_twin *t) {
	if (!t->pending) return 0;
	VkResult r = vkWaitForFences(t->device, 1, &t->fence, VK_TRUE, 30000000000ull);
	if (r == VK_SUCCESS) r = vkResetFences(t->device, 1, &t->fence);
	t->pending = 0;
	return (int)r;
}

VkCommandBuffer lc_twin_begin(lc_twin *t) {
	if (lc_twin_wait(t) != 0 || vkResetCommandPool(t->device, t->pool, 0) != VK_SUCCESS) return NULL;
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	return vkBeginCommandBuffer(t->cmd, &bi) == VK_SUCCESS ? t->cmd : NULL;
}

int lc_twin_submit(lc_twin *t) {
	VkResult r = vkEndCommandBuffer(t->cmd);
	if (r != VK_SUCCESS) return (int)r;
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = 1;
	si.pCommandBuffers = &t->cmd;
	r = vkQueueSubmit(t->queue.queue, 1, &si, t->fence);
	t->pending = r == VK_SUCCESS;
	return (int)r;
}
