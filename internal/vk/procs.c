// Framescope's own Vulkan calls, through the tables of procs.h. Structure
// layouts and values are Vulkan's ABI, written out as in fsvk.c.
#include "procs.h"

#include <stdlib.h>
#include <string.h>

typedef fsPFN (*fsGIPA)(fsVkInstance, const char *);
typedef fsPFN (*fsGDPA)(fsVkDevice, const char *);

fsPFN fs_gipa_proc(fsPFN gipa, fsVkInstance inst, const char *name) {
	return gipa ? ((fsGIPA)gipa)(inst, name) : NULL;
}

fsPFN fs_gdpa_proc(fsPFN gdpa, fsVkDevice dev, const char *name) {
	return gdpa ? ((fsGDPA)gdpa)(dev, name) : NULL;
}

#define LOAD(get, h, field, name)                  \
	do {                                       \
		out->field = get(h, name);         \
		if (out->field == NULL && !missing) \
			missing = name;            \
	} while (0)

const char *fs_load_instance_procs(fsPFN gipa, fsVkInstance inst, fsInstanceProcs *out) {
	memset(out, 0, sizeof *out);
	out->gipa = gipa;
	if (gipa == NULL)
		return "vkGetInstanceProcAddr";
	const char *missing = NULL;
	fsGIPA get = (fsGIPA)gipa;
	LOAD(get, inst, getDeviceProcAddr, "vkGetDeviceProcAddr");
	LOAD(get, inst, destroyInstance, "vkDestroyInstance");
	LOAD(get, inst, enumeratePhysicalDevices, "vkEnumeratePhysicalDevices");
	LOAD(get, inst, getProperties, "vkGetPhysicalDeviceProperties");
	LOAD(get, inst, getFeatures, "vkGetPhysicalDeviceFeatures");
	LOAD(get, inst, getMemoryProperties, "vkGetPhysicalDeviceMemoryProperties");
	LOAD(get, inst, queueFamilies, "vkGetPhysicalDeviceQueueFamilyProperties");
	LOAD(get, inst, deviceExtensions, "vkEnumerateDeviceExtensionProperties");
	return missing;
}

const char *fs_load_device_procs(fsPFN gdpa, fsPFN setLoaderData, fsVkDevice dev, fsDeviceProcs *out) {
	memset(out, 0, sizeof *out);
	out->gdpa = gdpa;
	out->setLoaderData = setLoaderData;
	if (gdpa == NULL)
		return "vkGetDeviceProcAddr";
	const char *missing = NULL;
	fsGDPA get = (fsGDPA)gdpa;
	LOAD(get, dev, destroyDevice, "vkDestroyDevice");
	LOAD(get, dev, deviceWaitIdle, "vkDeviceWaitIdle");
	LOAD(get, dev, getDeviceQueue, "vkGetDeviceQueue");
	LOAD(get, dev, createQueryPool, "vkCreateQueryPool");
	LOAD(get, dev, destroyQueryPool, "vkDestroyQueryPool");
	LOAD(get, dev, getQueryPoolResults, "vkGetQueryPoolResults");
	LOAD(get, dev, cmdResetQueryPool, "vkCmdResetQueryPool");
	LOAD(get, dev, cmdBeginQuery, "vkCmdBeginQuery");
	LOAD(get, dev, cmdEndQuery, "vkCmdEndQuery");
	LOAD(get, dev, createBuffer, "vkCreateBuffer");
	LOAD(get, dev, destroyBuffer, "vkDestroyBuffer");
	LOAD(get, dev, getBufferMemoryRequirements, "vkGetBufferMemoryRequirements");
	LOAD(get, dev, allocateMemory, "vkAllocateMemory");
	LOAD(get, dev, freeMemory, "vkFreeMemory");
	LOAD(get, dev, bindBufferMemory, "vkBindBufferMemory");
	LOAD(get, dev, mapMemory, "vkMapMemory");
	LOAD(get, dev, unmapMemory, "vkUnmapMemory");
	LOAD(get, dev, createCommandPool, "vkCreateCommandPool");
	LOAD(get, dev, destroyCommandPool, "vkDestroyCommandPool");
	LOAD(get, dev, allocateCommandBuffers, "vkAllocateCommandBuffers");
	LOAD(get, dev, beginCommandBuffer, "vkBeginCommandBuffer");
	LOAD(get, dev, endCommandBuffer, "vkEndCommandBuffer");
	LOAD(get, dev, resetCommandBuffer, "vkResetCommandBuffer");
	LOAD(get, dev, createFence, "vkCreateFence");
	LOAD(get, dev, destroyFence, "vkDestroyFence");
	LOAD(get, dev, resetFences, "vkResetFences");
	LOAD(get, dev, waitForFences, "vkWaitForFences");
	LOAD(get, dev, getFenceStatus, "vkGetFenceStatus");
	return missing;
}

#undef LOAD

// ---- Instance level ----

typedef void (*fsPFN_DestroyInstance)(fsVkInstance, const void *);
void fs_destroy_instance(const fsInstanceProcs *p, fsVkInstance inst) { ((fsPFN_DestroyInstance)p->destroyInstance)(inst, NULL); }

typedef fsVkResult (*fsPFN_EnumeratePhysical)(fsVkInstance, uint32_t *, fsVkPhysicalDevice *);
fsVkResult fs_enumerate_physical(const fsInstanceProcs *p, fsVkInstance inst, uint32_t *n, fsVkPhysicalDevice *out) {
	return ((fsPFN_EnumeratePhysical)p->enumeratePhysicalDevices)(inst, n, out);
}

typedef void (*fsPFN_PhysicalQuery)(fsVkPhysicalDevice, void *);
void fs_get_properties(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out) {
	memset(out, 0, fs_properties_size);
	((fsPFN_PhysicalQuery)p->getProperties)(pd, out);
}
void fs_get_features(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out) {
	memset(out, 0, fs_properties_size);
	((fsPFN_PhysicalQuery)p->getFeatures)(pd, out);
}
void fs_get_memory_properties(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out) {
	memset(out, 0, fs_properties_size);
	((fsPFN_PhysicalQuery)p->getMemoryProperties)(pd, out);
}

// ---- Device level ----

typedef void (*fsPFN_DestroyDevice)(fsVkDevice, const void *);
void fs_destroy_device(const fsDeviceProcs *p, fsVkDevice dev) { ((fsPFN_DestroyDevice)p->destroyDevice)(dev, NULL); }

typedef fsVkResult (*fsPFN_DeviceWaitIdle)(fsVkDevice);
fsVkResult fs_device_wait_idle(const fsDeviceProcs *p, fsVkDevice dev) { return ((fsPFN_DeviceWaitIdle)p->deviceWaitIdle)(dev); }

typedef fsVkResult (*fsPFN_SetLoaderData)(fsVkDevice, void *);

// dispatch_like gives obj, a dispatchable object made by a call below the
// loader's trampolines, its device's dispatch, as the loader's
// trampoline would: through vkSetDeviceLoaderData where a layer has it,
// else by copying the device's first word over the driver's magic.
static void dispatch_like(const fsDeviceProcs *p, fsVkDevice dev, void *obj) {
	if (obj == NULL)
		return;
	if (p->setLoaderData) {
		((fsPFN_SetLoaderData)p->setLoaderData)(dev, obj);
		return;
	}
	if (*(uintptr_t *)obj == 0x01CDC0DE) // ICD_LOADER_MAGIC: never dispatched yet
		*(void **)obj = *(void **)dev;
}

typedef void (*fsPFN_GetDeviceQueue)(fsVkDevice, uint32_t, uint32_t, void **);
void *fs_get_device_queue(const fsDeviceProcs *p, fsVkDevice dev, uint32_t family, uint32_t index) {
	void *q = NULL;
	((fsPFN_GetDeviceQueue)p->getDeviceQueue)(dev, family, index, &q);
	dispatch_like(p, dev, q);
	return q;
}

typedef struct {
	int32_t sType; // 11 VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	int32_t queryType;
	uint32_t queryCount;
	uint32_t pipelineStatistics;
} fsQueryPoolCreateInfo;

typedef fsVkResult (*fsPFN_CreateQueryPool)(fsVkDevice, const fsQueryPoolCreateInfo *, const void *, fsVkQueryPool *);
fsVkResult fs_create_query_pool(const fsDeviceProcs *p, fsVkDevice dev, int32_t type, uint32_t count, uint32_t stats,
	fsVkQueryPool *out) {
	fsQueryPoolCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 11;
	ci.queryType = type;
	ci.queryCount = count;
	ci.pipelineStatistics = stats;
	return ((fsPFN_CreateQueryPool)p->createQueryPool)(dev, &ci, NULL, out);
}

typedef void (*fsPFN_DestroyHandle)(fsVkDevice, uint64_t, const void *);
void fs_destroy_query_pool(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool) { ((fsPFN_DestroyHandle)fn)(dev, pool, NULL); }

typedef fsVkResult (*fsPFN_GetQueryPoolResults)(fsVkDevice, fsVkQueryPool, uint32_t, uint32_t, size_t, void *, uint64_t, uint32_t);
fsVkResult fs_query_results(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool, uint32_t first, uint32_t count, size_t size,
	void *data, uint64_t stride, uint32_t flags) {
	return ((fsPFN_GetQueryPoolResults)fn)(dev, pool, first, count, size, data, stride, flags);
}

typedef void (*fsPFN_CmdQueryRange)(fsVkCommandBuffer, fsVkQueryPool, uint32_t, uint32_t);
void fs_cmd_reset_query_pool(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t first, uint32_t count) {
	((fsPFN_CmdQueryRange)fn)((fsVkCommandBuffer)cmd, pool, first, count);
}

void fs_cmd_begin_query(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t query) {
	((fsPFN_CmdQueryRange)fn)((fsVkCommandBuffer)cmd, pool, query, 0); // flags 0
}

typedef void (*fsPFN_CmdEndQuery)(fsVkCommandBuffer, fsVkQueryPool, uint32_t);
void fs_cmd_end_query(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t query) {
	((fsPFN_CmdEndQuery)fn)((fsVkCommandBuffer)cmd, pool, query);
}

// ---- Host buffers ----

typedef struct {
	int32_t sType; // 12 VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	uint64_t size;
	uint32_t usage;
	int32_t sharingMode; // 0 EXCLUSIVE
	uint32_t queueFamilyIndexCount;
	const uint32_t *pQueueFamilyIndices;
} fsBufferCreateInfo;

typedef struct {
	uint64_t size, alignment;
	uint32_t memoryTypeBits;
} fsMemoryRequirements;

typedef struct {
	int32_t sType; // 5 VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
	const void *pNext;
	uint64_t allocationSize;
	uint32_t memoryTypeIndex;
} fsMemoryAllocateInfo;

typedef fsVkResult (*fsPFN_CreateBuffer)(fsVkDevice, const fsBufferCreateInfo *, const void *, fsVkBuffer *);
typedef void (*fsPFN_GetBufferMemoryRequirements)(fsVkDevice, fsVkBuffer, fsMemoryRequirements *);
typedef fsVkResult (*fsPFN_AllocateMemory)(fsVkDevice, const fsMemoryAllocateInfo *, const void *, uint64_t *);
typedef fsVkResult (*fsPFN_BindBufferMemory)(fsVkDevice, fsVkBuffer, uint64_t, uint64_t);
typedef fsVkResult (*fsPFN_MapMemory)(fsVkDevice, uint64_t, uint64_t, uint64_t, uint32_t, void **);
typedef void (*fsPFN_UnmapMemory)(fsVkDevice, uint64_t);

void fs_host_buffer_create(const fsDeviceProcs *p, fsVkDevice dev, uint64_t size, uint32_t usage, fsHostBuffer *b) {
	memset(b, 0, sizeof *b);
	fsBufferCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 12;
	ci.size = size;
	ci.usage = usage;
	b->rc = ((fsPFN_CreateBuffer)p->createBuffer)(dev, &ci, NULL, &b->buffer);
	if (b->rc != 0) {
		b->buffer = 0;
		b->failed = "vkCreateBuffer";
		return;
	}
	fsMemoryRequirements req;
	memset(&req, 0, sizeof req);
	((fsPFN_GetBufferMemoryRequirements)p->getBufferMemoryRequirements)(dev, b->buffer, &req);
	b->memorySize = req.size;
	b->memoryTypes = req.memoryTypeBits;
}

void fs_host_buffer_bind(const fsDeviceProcs *p, fsVkDevice dev, uint32_t type, fsHostBuffer *b) {
	fsMemoryAllocateInfo ai;
	memset(&ai, 0, sizeof ai);
	ai.sType = 5;
	ai.allocationSize = b->memorySize;
	ai.memoryTypeIndex = type;
	if ((b->rc = ((fsPFN_AllocateMemory)p->allocateMemory)(dev, &ai, NULL, &b->memory)) != 0) {
		b->memory = 0;
		b->failed = "vkAllocateMemory";
		return;
	}
	if ((b->rc = ((fsPFN_BindBufferMemory)p->bindBufferMemory)(dev, b->buffer, b->memory, 0)) != 0) {
		b->failed = "vkBindBufferMemory";
		return;
	}
	if ((b->rc = ((fsPFN_MapMemory)p->mapMemory)(dev, b->memory, 0, ~0ull, 0, &b->ptr)) != 0) {
		b->ptr = NULL;
		b->failed = "vkMapMemory";
	}
}

void fs_host_buffer_destroy(const fsDeviceProcs *p, fsVkDevice dev, fsHostBuffer *b) {
	if (b->ptr)
		((fsPFN_UnmapMemory)p->unmapMemory)(dev, b->memory);
	if (b->buffer)
		((fsPFN_DestroyHandle)p->destroyBuffer)(dev, b->buffer, NULL);
	if (b->memory)
		((fsPFN_DestroyHandle)p->freeMemory)(dev, b->memory, NULL);
	b->ptr = NULL;
	b->buffer = b->memory = 0;
}

// ---- Calibration probes ----

typedef struct {
	int32_t sType; // 39 VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	uint32_t queueFamilyIndex;
} fsCommandPoolCreateInfo;

typedef struct {
	int32_t sType; // 40 VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
	const void *pNext;
	uint64_t commandPool;
	int32_t level;
	uint32_t commandBufferCount;
} fsCommandBufferAllocateInfo;

typedef struct {
	int32_t sType; // 42 VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
	const void *pNext;
	uint32_t flags;
	const void *pInheritanceInfo;
} fsCommandBufferBeginInfo;

typedef struct {
	int32_t sType; // 8 VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
	const void *pNext;
	uint32_t flags;
} fsFenceCreateInfo;

typedef fsVkResult (*fsPFN_CreateCommandPool)(fsVkDevice, const fsCommandPoolCreateInfo *, const void *, uint64_t *);
typedef fsVkResult (*fsPFN_AllocateCommandBuffers)(fsVkDevice, const fsCommandBufferAllocateInfo *, void **);
typedef fsVkResult (*fsPFN_CreateFence)(fsVkDevice, const fsFenceCreateInfo *, const void *, uint64_t *);
typedef fsVkResult (*fsPFN_BeginCommandBuffer)(void *, const fsCommandBufferBeginInfo *);
typedef fsVkResult (*fsPFN_EndCommandBuffer)(void *);
typedef fsVkResult (*fsPFN_ResetCommandBuffer)(void *, uint32_t);
typedef fsVkResult (*fsPFN_ResetFences)(fsVkDevice, uint32_t, const uint64_t *);
typedef fsVkResult (*fsPFN_WaitForFences)(fsVkDevice, uint32_t, const uint64_t *, uint32_t, uint64_t);
typedef fsVkResult (*fsPFN_GetFenceStatus)(fsVkDevice, uint64_t);
typedef void (*fsPFN_CmdWriteTimestamp)(void *, uint32_t, uint64_t, uint32_t);

fsProbe fs_probe_make(const fsDeviceProcs *p, fsVkDevice dev, uint32_t family) {
	fsProbe b;
	memset(&b, 0, sizeof b);
	fsCommandPoolCreateInfo pci = {39, NULL, 0x2 /* RESET_COMMAND_BUFFER */, family};
	if ((b.rc = ((fsPFN_CreateCommandPool)p->createCommandPool)(dev, &pci, NULL, &b.cmdPool)) != 0) {
		b.cmdPool = 0;
		b.failed = "vkCreateCommandPool";
		return b;
	}
	fsCommandBufferAllocateInfo ai = {40, NULL, b.cmdPool, 0 /* PRIMARY */, 1};
	if ((b.rc = ((fsPFN_AllocateCommandBuffers)p->allocateCommandBuffers)(dev, &ai, &b.cmd)) != 0) {
		b.cmd = NULL;
		b.failed = "vkAllocateCommandBuffers";
		return b;
	}
	dispatch_like(p, dev, b.cmd);
	if ((b.rc = fs_create_query_pool(p, dev, 2 /* TIMESTAMP */, 1, 0, &b.queryPool)) != 0) {
		b.queryPool = 0;
		b.failed = "vkCreateQueryPool";
		return b;
	}
	fsFenceCreateInfo fci = {8, NULL, 0};
	if ((b.rc = ((fsPFN_CreateFence)p->createFence)(dev, &fci, NULL, &b.fence)) != 0) {
		b.fence = 0;
		b.failed = "vkCreateFence";
	}
	return b;
}

fsVkResult fs_probe_record(const fsDeviceProcs *p, fsVkDevice dev, fsProbe *b, int hostReset, fsPFN writeTS) {
	((fsPFN_ResetFences)p->resetFences)(dev, 1, &b->fence);
	((fsPFN_ResetCommandBuffer)p->resetCommandBuffer)(b->cmd, 0);
	fsCommandBufferBeginInfo bi = {42, NULL, 0x1 /* ONE_TIME_SUBMIT */, NULL};
	fsVkResult r = ((fsPFN_BeginCommandBuffer)p->beginCommandBuffer)(b->cmd, &bi);
	if (r != 0)
		return r;
	if (!hostReset)
		fs_cmd_reset_query_pool(p->cmdResetQueryPool, (uintptr_t)b->cmd, b->queryPool, 0, 1);
	((fsPFN_CmdWriteTimestamp)writeTS)(b->cmd, 0x1 /* TOP_OF_PIPE */, b->queryPool, 0);
	return ((fsPFN_EndCommandBuffer)p->endCommandBuffer)(b->cmd);
}

fsVkResult fs_probe_wait(const fsDeviceProcs *p, fsVkDevice dev, const fsProbe *b, uint64_t timeout) {
	return ((fsPFN_WaitForFences)p->waitForFences)(dev, 1, &b->fence, 1, timeout);
}

fsVkResult fs_probe_status(const fsDeviceProcs *p, fsVkDevice dev, const fsProbe *b) {
	return ((fsPFN_GetFenceStatus)p->getFenceStatus)(dev, b->fence);
}

void fs_probe_destroy(const fsDeviceProcs *p, fsVkDevice dev, fsProbe *b) {
	if (b->fence)
		((fsPFN_DestroyHandle)p->destroyFence)(dev, b->fence, NULL);
	if (b->queryPool)
		((fsPFN_DestroyHandle)p->destroyQueryPool)(dev, b->queryPool, NULL);
	if (b->cmdPool)
		((fsPFN_DestroyHandle)p->destroyCommandPool)(dev, b->cmdPool, NULL); // frees its command buffer
	memset(b, 0, sizeof *b);
}
