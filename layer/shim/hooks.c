// The device commands the layer hooks: each calls the next layer's, and
// tells the Go library what happened, before or after as the zone's
// place in the command buffer asks. Without the Go library they only
// pass through.
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

#define DEV(h) fs_device *v = fs_device_of(h)
#define GO(f, ...)                           \
	do {                                 \
		if (fs_go_loaded)            \
			fs_go.f(__VA_ARGS__); \
	} while (0)

// thread_id is the calling thread's ID, asked of the kernel once a
// thread (a system call at every submission was a cost on its thread).
// A forked child's first thread keeps its parent's, but calls no Go.
static int thread_id(void) {
	static FS_TLS int tid;
	if (!tid)
		tid = (int)syscall(SYS_gettid);
	return tid;
}

static uint64_t cpu_begin(int what) { return fs_go_loaded ? fs_go.cpu_begin(what, thread_id()) : 0; }
static void cpu_end(uint64_t s) { GO(cpu_end, s); }

static VKAPI_ATTR void VKAPI_CALL fs_DestroyDevice(VkDevice device, const VkAllocationCallbacks *alloc) {
	if (!device)
		return;
	DEV(device);
	if (!v)
		return;
	GO(device_destroyed, device); // the profiler closes while the device lives
	fs_remove_device(v->key);
	fs_cmd_remove_device(v);
	v->DestroyDevice(device, alloc);
	free(v);
}

static VKAPI_ATTR void VKAPI_CALL fs_GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index, VkQueue *q) {
	DEV(device);
	v->GetDeviceQueue(device, family, index, q);
	if (*q)
		GO(queue, device, *q, family, index);
}

static VKAPI_ATTR void VKAPI_CALL fs_GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2 *info, VkQueue *q) {
	DEV(device);
	*q = VK_NULL_HANDLE;
	DOWN(v, GetDeviceQueue2, (device, info, q));
	if (*q && info->flags == 0) // protected queues: not profiled
		GO(queue, device, *q, info->queueFamilyIndex, info->queueIndex);
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo *ci,
							    const VkAllocationCallbacks *alloc, VkCommandPool *pool) {
	DEV(device);
	VkResult r = v->CreateCommandPool(device, ci, alloc, pool);
	if (r == VK_SUCCESS)
		GO(pool, device, (uint64_t)*pool, ci->queueFamilyIndex);
	return r;
}

static VKAPI_ATTR void VKAPI_CALL fs_DestroyCommandPool(VkDevice device, VkCommandPool pool, const VkAllocationCallbacks *alloc) {
	DEV(device);
	if (pool) {
		GO(pool_gone, device, (uint64_t)pool, 1); // frees its command buffers
		fs_cmd_remove_pool((uint64_t)pool);
	}
	v->DestroyCommandPool(device, pool, alloc);
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_ResetCommandPool(VkDevice device, VkCommandPool pool, VkCommandPoolResetFlags flags) {
	DEV(device);
	VkResult r = v->ResetCommandPool(device, pool, flags);
	GO(pool_gone, device, (uint64_t)pool, 0);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo *ai,
								 VkCommandBuffer *cmds) {
	DEV(device);
	VkResult r = v->AllocateCommandBuffers(device, ai, cmds);
	if (r == VK_SUCCESS)
		for (uint32_t i = 0; i < ai->commandBufferCount; i++)
			fs_cmd_add(v, cmds[i], (uint64_t)ai->commandPool, ai->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY);
	if (r == VK_SUCCESS)
		GO(allocated, device, (uint64_t)ai->commandPool, ai->commandBufferCount, (void *const *)cmds,
		   ai->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY);
	return r;
}

static VKAPI_ATTR void VKAPI_CALL fs_FreeCommandBuffers(VkDevice device, VkCommandPool pool, uint32_t n, const VkCommandBuffer *cmds) {
	DEV(device);
	GO(freed, device, n, (void *const *)cmds);
	for (uint32_t i = 0; i < n; i++)
		if (cmds[i])
			fs_cmd_remove(cmds[i]);
	v->FreeCommandBuffers(device, pool, n, cmds);
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_BeginCommandBuffer(VkCommandBuffer cmd, const VkCommandBufferBeginInfo *info) {
	CMD(cmd);
	VkResult r = v->BeginCommandBuffer(cmd, info);
	if (r == VK_SUCCESS)
		fs_cmd_begin(fc, cmd, info->flags);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_EndCommandBuffer(VkCommandBuffer cmd) {
	CMD(cmd);
	fs_cmd_end(fc, cmd);
	return v->EndCommandBuffer(cmd);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdExecuteCommands(VkCommandBuffer cmd, uint32_t n, const VkCommandBuffer *secondaries) {
	DEV(cmd);
	GO(execute, cmd, n, (void *const *)secondaries);
	v->CmdExecuteCommands(cmd, n, secondaries);
}

// secondaries_next tells Go that a render pass instance whose contents
// are secondary command buffers begins: where the layer counts work, the
// primary's counts end before it (an execution of none).
static void secondaries_next(VkCommandBuffer cmd) { GO(execute, cmd, 0, NULL); }

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginRenderPass(VkCommandBuffer cmd, const VkRenderPassBeginInfo *b, VkSubpassContents c) {
	CMD(cmd);
	if (c == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS)
		secondaries_next(cmd);
	fs_zone_begin(fc, cmd, NULL, FS_ZONE_RENDER_PASS);
	v->CmdBeginRenderPass(cmd, b, c);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndRenderPass(VkCommandBuffer cmd) {
	CMD(cmd);
	v->CmdEndRenderPass(cmd);
	fs_zone_end(fc, cmd, FS_ZONE_RENDER_PASS);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginRenderPass2(VkCommandBuffer cmd, const VkRenderPassBeginInfo *b, const VkSubpassBeginInfo *s) {
	CMD(cmd);
	if (s && s->contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS)
		secondaries_next(cmd);
	fs_zone_begin(fc, cmd, NULL, FS_ZONE_RENDER_PASS);
	DOWN(v, CmdBeginRenderPass2, (cmd, b, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndRenderPass2(VkCommandBuffer cmd, const VkSubpassEndInfo *e) {
	CMD(cmd);
	DOWN(v, CmdEndRenderPass2, (cmd, e));
	fs_zone_end(fc, cmd, FS_ZONE_RENDER_PASS);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginRendering(VkCommandBuffer cmd, const VkRenderingInfo *info) {
	CMD(cmd);
	if (info->flags & VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT)
		secondaries_next(cmd);
	// A resumed instance continues the one suspended before it: one zone.
	if (!(info->flags & VK_RENDERING_RESUMING_BIT))
		fs_zone_begin(fc, cmd, NULL, FS_ZONE_RENDERING);
	DOWN(v, CmdBeginRendering, (cmd, info));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndRendering(VkCommandBuffer cmd) {
	CMD(cmd);
	DOWN(v, CmdEndRendering, (cmd));
	fs_zone_end(fc, cmd, FS_ZONE_RENDERING);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginDebugUtilsLabelEXT(VkCommandBuffer cmd, const VkDebugUtilsLabelEXT *l) {
	CMD(cmd);
	DOWN(v, CmdBeginDebugUtilsLabelEXT, (cmd, l));
	fs_zone_begin(fc, cmd, l->pLabelName, FS_ZONE_LABEL);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cmd) {
	CMD(cmd);
	fs_zone_end(fc, cmd, FS_ZONE_LABEL);
	DOWN(v, CmdEndDebugUtilsLabelEXT, (cmd));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDebugMarkerBeginEXT(VkCommandBuffer cmd, const VkDebugMarkerMarkerInfoEXT *m) {
	CMD(cmd);
	DOWN(v, CmdDebugMarkerBeginEXT, (cmd, m));
	fs_zone_begin(fc, cmd, m->pMarkerName, FS_ZONE_MARKER);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDebugMarkerEndEXT(VkCommandBuffer cmd) {
	CMD(cmd);
	fs_zone_end(fc, cmd, FS_ZONE_MARKER);
	DOWN(v, CmdDebugMarkerEndEXT, (cmd));
}

// submit_begin begins a submission's span, which cpu_end ends, and
// hands the Go library the command buffers its n submissions carry (of
// vkQueueSubmit, s1, or vkQueueSubmit2, s2), in a list of its own: one
// call into Go before the driver's.
static uint64_t submit_begin(VkQueue q, uint32_t n, const VkSubmitInfo *s1, const VkSubmitInfo2 *s2) {
	if (!fs_go_loaded)
		return 0;
	uint32_t total = 0;
	for (uint32_t i = 0; i < n; i++)
		total += s1 ? s1[i].commandBufferCount : s2[i].commandBufferInfoCount;
	void *few[16], **cmds = total <= 16 ? few : malloc(total * sizeof *cmds);
	if (!cmds)
		total = 0; // the span alone
	uint32_t k = 0;
	for (uint32_t i = 0; i < n && k < total; i++) {
		uint32_t c = s1 ? s1[i].commandBufferCount : s2[i].commandBufferInfoCount;
		for (uint32_t j = 0; j < c; j++)
			cmds[k++] = s1 ? (void *)s1[i].pCommandBuffers[j] : (void *)s2[i].pCommandBufferInfos[j].commandBuffer;
	}
	uint64_t span = fs_go.submit_begin(q, thread_id(), total, total ? cmds : NULL);
	if (cmds != few)
		free(cmds);
	return span;
}

// frames_end ends a frame for each frame end the program marked
// (VK_EXT_frame_boundary).
static void frames_end(int ends) {
	for (int i = 0; i < ends && fs_go_loaded; i++)
		fs_go.boundary();
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_QueueSubmit(VkQueue q, uint32_t n, const VkSubmitInfo *s, VkFence fence) {
	DEV(q);
	fs_boundary_call bc;
	int ends = fs_boundary_submit(v, n, &s, NULL, &bc);
	uint64_t span = submit_begin(q, n, s, NULL);
	VkResult r = v->QueueSubmit(q, n, s, fence);
	fs_boundary_restore(&bc);
	cpu_end(span);
	frames_end(ends);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_QueueSubmit2(VkQueue q, uint32_t n, const VkSubmitInfo2 *s, VkFence fence) {
	DEV(q);
	fs_boundary_call bc;
	int ends = fs_boundary_submit(v, n, NULL, &s, &bc);
	uint64_t span = submit_begin(q, n, NULL, s);
	VkResult r = v->QueueSubmit2 ? v->QueueSubmit2(q, n, s, fence) : VK_ERROR_EXTENSION_NOT_PRESENT;
	fs_boundary_restore(&bc);
	cpu_end(span);
	frames_end(ends);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_QueuePresentKHR(VkQueue q, const VkPresentInfoKHR *info) {
	DEV(q);
	uint64_t span = cpu_begin(FS_CPU_PRESENT);
	fs_boundary_call bc;
	VkPresentInfoKHR copy;
	int ends = fs_boundary_present(v, &info, &copy, &bc);
	VkResult r = v->QueuePresentKHR ? v->QueuePresentKHR(q, info) : VK_ERROR_EXTENSION_NOT_PRESENT;
	fs_boundary_restore(&bc);
	cpu_end(span);
	frames_end(ends);
	GO(present, q);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_AcquireNextImageKHR(VkDevice d, VkSwapchainKHR sc, uint64_t timeout, VkSemaphore sem,
							      VkFence fence, uint32_t *index) {
	DEV(d);
	uint64_t span = cpu_begin(FS_CPU_ACQUIRE);
	VkResult r = v->AcquireNextImageKHR ? v->AcquireNextImageKHR(d, sc, timeout, sem, fence, index) : VK_ERROR_EXTENSION_NOT_PRESENT;
	cpu_end(span);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_WaitForFences(VkDevice d, uint32_t n, const VkFence *f, VkBool32 all, uint64_t timeout) {
	DEV(d);
	uint64_t span = cpu_begin(FS_CPU_WAIT_FENCES);
	VkResult r = v->WaitForFences(d, n, f, all, timeout);
	cpu_end(span);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_WaitSemaphores(VkDevice d, const VkSemaphoreWaitInfo *info, uint64_t timeout) {
	DEV(d);
	uint64_t span = cpu_begin(FS_CPU_WAIT_SEMAPHORES);
	VkResult r = v->WaitSemaphores ? v->WaitSemaphores(d, info, timeout) : VK_ERROR_EXTENSION_NOT_PRESENT;
	cpu_end(span);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_QueueWaitIdle(VkQueue q) {
	DEV(q);
	uint64_t span = cpu_begin(FS_CPU_QUEUE_WAIT_IDLE);
	VkResult r = v->QueueWaitIdle(q);
	cpu_end(span);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_DeviceWaitIdle(VkDevice d) {
	DEV(d);
	uint64_t span = cpu_begin(FS_CPU_DEVICE_WAIT_IDLE);
	VkResult r = v->DeviceWaitIdle(d);
	cpu_end(span);
	return r;
}

PFN_vkVoidFunction fs_device_hook(const char *name) {
	static const fs_hook hooks[] = {
#define H FS_HOOK
	    H("vkDestroyDevice", fs_DestroyDevice),
	    H("vkGetDeviceQueue", fs_GetDeviceQueue),
	    H("vkGetDeviceQueue2", fs_GetDeviceQueue2),
	    H("vkCreateCommandPool", fs_CreateCommandPool),
	    H("vkDestroyCommandPool", fs_DestroyCommandPool),
	    H("vkResetCommandPool", fs_ResetCommandPool),
	    H("vkAllocateCommandBuffers", fs_AllocateCommandBuffers),
	    H("vkFreeCommandBuffers", fs_FreeCommandBuffers),
	    H("vkBeginCommandBuffer", fs_BeginCommandBuffer),
	    H("vkEndCommandBuffer", fs_EndCommandBuffer),
	    H("vkCmdExecuteCommands", fs_CmdExecuteCommands),
	    H("vkCmdBeginRenderPass", fs_CmdBeginRenderPass),
	    H("vkCmdEndRenderPass", fs_CmdEndRenderPass),
	    H("vkCmdBeginRenderPass2", fs_CmdBeginRenderPass2),
	    H("vkCmdBeginRenderPass2KHR", fs_CmdBeginRenderPass2),
	    H("vkCmdEndRenderPass2", fs_CmdEndRenderPass2),
	    H("vkCmdEndRenderPass2KHR", fs_CmdEndRenderPass2),
	    H("vkCmdBeginRendering", fs_CmdBeginRendering),
	    H("vkCmdBeginRenderingKHR", fs_CmdBeginRendering),
	    H("vkCmdEndRendering", fs_CmdEndRendering),
	    H("vkCmdEndRenderingKHR", fs_CmdEndRendering),
	    H("vkCmdBeginDebugUtilsLabelEXT", fs_CmdBeginDebugUtilsLabelEXT),
	    H("vkCmdEndDebugUtilsLabelEXT", fs_CmdEndDebugUtilsLabelEXT),
	    H("vkCmdDebugMarkerBeginEXT", fs_CmdDebugMarkerBeginEXT),
	    H("vkCmdDebugMarkerEndEXT", fs_CmdDebugMarkerEndEXT),
	    H("vkQueueSubmit", fs_QueueSubmit),
	    H("vkQueueSubmit2", fs_QueueSubmit2),
	    H("vkQueueSubmit2KHR", fs_QueueSubmit2),
	    H("vkQueuePresentKHR", fs_QueuePresentKHR),
	    H("vkAcquireNextImageKHR", fs_AcquireNextImageKHR),
	    H("vkWaitForFences", fs_WaitForFences),
	    H("vkWaitSemaphores", fs_WaitSemaphores),
	    H("vkWaitSemaphoresKHR", fs_WaitSemaphores),
	    H("vkQueueWaitIdle", fs_QueueWaitIdle),
	    H("vkDeviceWaitIdle", fs_DeviceWaitIdle),
#undef H
	};
	PFN_vkVoidFunction fn = fs_find_hook(hooks, sizeof hooks / sizeof hooks[0], name);
	if (!fn)
		fn = fs_query_hook(name);
	return fn ? fn : fs_draw_hook(name);
}

PFN_vkVoidFunction fs_find_hook(const fs_hook *hooks, size_t n, const char *name) {
	for (size_t i = 0; i < n; i++)
		if (strcmp(hooks[i].name, name) == 0)
			return hooks[i].fn;
	return NULL;
}
