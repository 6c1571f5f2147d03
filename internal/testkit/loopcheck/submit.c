// Submissions: vkQueueSubmit or, with synchronization2, vkQueueSubmit2KHR;
// binary or timeline semaphores.
#include "app_impl.h"

#include <string.h>

static int submit2(lc_app *a, VkQueue q, uint32_t n, const VkCommandBuffer *cmds, VkSemaphore wait, uint64_t wait_value,
	VkSemaphore signal, uint64_t signal_value, VkFence fence) {
	VkCommandBufferSubmitInfoKHR cs[8];
	for (uint32_t i = 0; i < n; i++) {
		memset(&cs[i], 0, sizeof cs[i]);
		cs[i].sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO_KHR;
		cs[i].commandBuffer = cmds[i];
	}
	VkSemaphoreSubmitInfoKHR w = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO_KHR};
	w.semaphore = wait;
	w.value = wait_value;
	w.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT_KHR;
	VkSemaphoreSubmitInfoKHR s = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO_KHR};
	s.semaphore = signal;
	s.value = signal_value;
	s.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT_KHR;
	VkSubmitInfo2KHR si = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2_KHR};
	si.commandBufferInfoCount = n;
	si.pCommandBufferInfos = cs;
	if (wait) {
		si.waitSemaphoreInfoCount = 1;
		si.pWaitSemaphoreInfos = &w;
	}
	if (signal) {
		si.signalSemaphoreInfoCount = 1;
		si.pSignalSemaphoreInfos = &s;
	}
	return (int)a->submit2(q, 1, &si, fence);
}

int lc_submit(lc_app *a, VkQueue q, uint32_t n, const VkCommandBuffer *cmds, VkSemaphore wait, uint64_t wait_value,
	VkSemaphore signal, uint64_t signal_value, VkFence fence) {
	if (n > 8) n = 8;
	if (a->sync2 && a->use_sync2) return submit2(a, q, n, cmds, wait, wait_value, signal, signal_value, fence);
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkCommandBuffer c[8];
	memcpy(c, cmds, n * sizeof c[0]);
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = n;
	si.pCommandBuffers = c;
	if (wait) {
		si.waitSemaphoreCount = 1;
		si.pWaitSemaphores = &wait;
		si.pWaitDstStageMask = &stage;
	}
	if (signal) {
		si.signalSemaphoreCount = 1;
		si.pSignalSemaphores = &signal;
	}
	VkTimelineSemaphoreSubmitInfo ts = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
	if (wait_value || signal_value) {
		ts.waitSemaphoreValueCount = si.waitSemaphoreCount;
		ts.pWaitSemaphoreValues = &wait_value;
		ts.signalSemaphoreValueCount = si.signalSemaphoreCount;
		ts.pSignalSemaphoreValues = &signal_value;
		si.pNext = &ts;
	}
	return (int)vkQueueSubmit(q, 1, &si, fence);
}

VkSemaphore lc_create_timeline(lc_app *a) {
	VkSemaphoreTypeCreateInfo ti = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
	ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
	VkSemaphoreCreateInfo ci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
	ci.pNext = &ti;
	VkSemaphore s = VK_NULL_HANDLE;
	vkCreateSemaphore(a->device, &ci, NULL, &s);
	return s;
}

int lc_wait_timeline(lc_app *a, VkSemaphore s, uint64_t value, uint64_t timeout) {
	VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
	wi.semaphoreCount = 1;
	wi.pSemaphores = &s;
	wi.pValues = &value;
	return (int)vkWaitSemaphores(a->device, &wi, timeout);
}

void lc_use_sync2(lc_app *a, int on) { a->use_sync2 = on; }
