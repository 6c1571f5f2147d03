// The entry points Framescope calls, loaded once per instance and per
// device through the vkGetInstanceProcAddr and vkGetDeviceProcAddr it was
// given: the loader's in a Go program, the next layer's in a Vulkan
// layer, so that a layer's calls go down the chain from it and never back
// through the loader's top (and the layers above). No call goes through a
// table shared by the process.
#ifndef FSVK_PROCS_H
#define FSVK_PROCS_H

#include "fsvk.h"

typedef struct {
	fsPFN gipa; // the vkGetInstanceProcAddr they came from
	fsPFN getDeviceProcAddr, destroyInstance, enumeratePhysicalDevices, getProperties, getFeatures,
		getMemoryProperties, queueFamilies, deviceExtensions;
} fsInstanceProcs;

typedef struct {
	fsPFN gdpa;          // the vkGetDeviceProcAddr they came from
	fsPFN setLoaderData; // PFN_vkSetDeviceLoaderData, or NULL (see fs_dispatch_like)
	fsPFN destroyDevice, deviceWaitIdle, getDeviceQueue;
	fsPFN createQueryPool, destroyQueryPool, getQueryPoolResults, cmdResetQueryPool, cmdBeginQuery, cmdEndQuery;
	fsPFN createBuffer, destroyBuffer, getBufferMemoryRequirements, allocateMemory, freeMemory, bindBufferMemory,
		mapMemory, unmapMemory;
	fsPFN createCommandPool, destroyCommandPool, allocateCommandBuffers, beginCommandBuffer, endCommandBuffer,
		resetCommandBuffer;
	fsPFN createFence, destroyFence, resetFences, waitForFences, getFenceStatus;
} fsDeviceProcs;

// Each returns the name of the first entry point it could not load, or
// NULL when it loaded them all.
const char *fs_load_instance_procs(fsPFN gipa, fsVkInstance inst, fsInstanceProcs *out);
const char *fs_load_device_procs(fsPFN gdpa, fsPFN setLoaderData, fsVkDevice dev, fsDeviceProcs *out);
fsPFN fs_gipa_proc(fsPFN gipa, fsVkInstance inst, const char *name);
fsPFN fs_gdpa_proc(fsPFN gdpa, fsVkDevice dev, const char *name);

// Instance level.
void fs_destroy_instance(const fsInstanceProcs *p, fsVkInstance inst);
fsVkResult fs_enumerate_physical(const fsInstanceProcs *p, fsVkInstance inst, uint32_t *n, fsVkPhysicalDevice *out);
// Each writes its structure into out, C memory of fs_properties_size
// bytes, which vulkan-go's types read (their ...Ref constructors).
#define fs_properties_size 4096
void fs_get_properties(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out);
void fs_get_features(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out);
void fs_get_memory_properties(const fsInstanceProcs *p, fsVkPhysicalDevice pd, void *out);

// Device level.
void fs_destroy_device(const fsDeviceProcs *p, fsVkDevice dev);
fsVkResult fs_device_wait_idle(const fsDeviceProcs *p, fsVkDevice dev);
void *fs_get_device_queue(const fsDeviceProcs *p, fsVkDevice dev, uint32_t family, uint32_t index);
fsVkResult fs_create_query_pool(const fsDeviceProcs *p, fsVkDevice dev, int32_t type, uint32_t count, uint32_t stats,
	fsVkQueryPool *out);
void fs_destroy_query_pool(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool);
fsVkResult fs_query_results(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool, uint32_t first, uint32_t count, size_t size,
	void *data, uint64_t stride, uint32_t flags);
void fs_cmd_reset_query_pool(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t first, uint32_t count);
void fs_cmd_begin_query(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t query);
void fs_cmd_end_query(fsPFN fn, uintptr_t cmd, fsVkQueryPool pool, uint32_t query);

// A buffer in host-visible, host-coherent memory, mapped: made in two
// steps, for the memory type is chosen between them.
typedef struct {
	fsVkBuffer buffer;
	uint64_t memory, memorySize;
	uint32_t memoryTypes; // VkMemoryRequirements.memoryTypeBits
	void *ptr;
	const char *failed; // the call that failed, or NULL
	fsVkResult rc;
} fsHostBuffer;
void fs_host_buffer_create(const fsDeviceProcs *p, fsVkDevice dev, uint64_t size, uint32_t usage, fsHostBuffer *b);
void fs_host_buffer_bind(const fsDeviceProcs *p, fsVkDevice dev, uint32_t type, fsHostBuffer *b);
void fs_host_buffer_destroy(const fsDeviceProcs *p, fsVkDevice dev, fsHostBuffer *b);

// A calibration probe: a command buffer that writes one timestamp, its
// pool, query pool and fence.
typedef struct {
	uint64_t cmdPool, queryPool, fence;
	void *cmd;
	const char *failed;
	fsVkResult rc;
} fsProbe;
fsProbe fs_probe_make(const fsDeviceProcs *p, fsVkDevice dev, uint32_t family);
// fs_probe_record resets the fence and records the timestamp; the query
// is reset in the command buffer unless hostReset (reset already).
fsVkResult fs_probe_record(const fsDeviceProcs *p, fsVkDevice dev, fsProbe *b, int hostReset, fsPFN writeTS);
fsVkResult fs_probe_wait(const fsDeviceProcs *p, fsVkDevice dev, const fsProbe *b, uint64_t timeout);
fsVkResult fs_probe_status(const fsDeviceProcs *p, fsVkDevice dev, const fsProbe *b);
void fs_probe_destroy(const fsDeviceProcs *p, fsVkDevice dev, fsProbe *b);

#endif
