// The Framescope Vulkan layer's C part: the loader's entry points, the
// dispatch chain, and the hooks of the commands it turns into zones, frames
// and CPU spans. What it learns it hands to the layer's Go library
// (libframescope_go.so, package layer/lib), loaded on the first instance.
#ifndef FRAMESCOPE_SHIM_H
#define FRAMESCOPE_SHIM_H

#include <stdint.h>
#include <pthread.h>
#include <vulkan/vulkan.h>
#include <vulkan/vk_layer.h>

#include "framescope_czones.h" // profiler/: the library's zone path for C

#define FS_LAYER_NAME "VK_LAYER_FRAMESCOPE_profile"

// FS_TLS declares a thread's variable with the initial-exec model: read
// with one load relative to the thread pointer, where the default model
// for a library loaded at run time (global-dynamic) calls __tls_get_addr
// at each read, on every hooked command. Such variables take the static
// TLS space glibc keeps for libraries loaded later, which is small (a few
// hundred bytes shared by every library): keep them to a pointer or a few
// words.
#define FS_TLS __thread __attribute__((tls_model("initial-exec")))

// The key of a dispatchable object: the loader's dispatch table pointer,
// which a device shares with its queues and command buffers, and an
// instance with its physical devices.
static inline void *fs_key(const void *dispatchable) { return *(void *const *)dispatchable; }

typedef struct fs_instance {
	void *key;
	VkInstance handle;
	uint32_t api_version;
	int debug_utils, props2;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkDestroyInstance DestroyInstance;
	PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
	PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
	PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
	PFN_vkGetPhysicalDeviceFeatures GetPhysicalDeviceFeatures;
	PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
	// The profiler's instance-level entry points, as the next layer
	// answered them when the instance was made (see fs_profiler_gipa).
	PFN_vkVoidFunction profiler_procs[16];
	struct fs_instance *next;
} fs_instance;

// fs_profiler_gipa is the vkGetInstanceProcAddr the layer gives the
// profiler: the next layer's answers, as they were when the instance was
// made. Asked later, the loader's terminator answers some names
// (vkEnumerateDeviceExtensionProperties in 1.3.239) from the top of the
// chain, so that a call through them would come back through the layers
// above this one.
PFN_vkVoidFunction VKAPI_CALL fs_profiler_gipa(VkInstance instance, const char *name);
void fs_profiler_procs(fs_instance *i);

// The device commands the layer hooks, as the next layer gives them.
typedef struct fs_device {
	void *key;
	VkDevice handle;
	fs_instance *inst;
	PFN_vkGetDeviceProcAddr gdpa;
	PFN_vkGetInstanceProcAddr gipa;       // the next layer's, for the profiler
	PFN_vkSetDeviceLoaderData set_loader; // the loader's, for the profiler
	PFN_vkDestroyDevice DestroyDevice;
	PFN_vkBeginCommandBuffer BeginCommandBuffer;
	PFN_vkEndCommandBuffer EndCommandBuffer;
	PFN_vkCmdExecuteCommands CmdExecuteCommands;
	PFN_vkCmdBeginRenderPass CmdBeginRenderPass;
	PFN_vkCmdEndRenderPass CmdEndRenderPass;
	PFN_vkCmdBeginRenderPass2 CmdBeginRenderPass2;
	PFN_vkCmdEndRenderPass2 CmdEndRenderPass2;
	PFN_vkCmdBeginRendering CmdBeginRendering;
	PFN_vkCmdEndRendering CmdEndRendering;
	PFN_vkCmdBeginDebugUtilsLabelEXT CmdBeginDebugUtilsLabelEXT;
	PFN_vkCmdEndDebugUtilsLabelEXT CmdEndDebugUtilsLabelEXT;
	PFN_vkCmdDebugMarkerBeginEXT CmdDebugMarkerBeginEXT;
	PFN_vkCmdDebugMarkerEndEXT CmdDebugMarkerEndEXT;
	PFN_vkQueueSubmit QueueSubmit;
	PFN_vkQueueSubmit2 QueueSubmit2;
	PFN_vkQueuePresentKHR QueuePresentKHR;
	PFN_vkAcquireNextImageKHR AcquireNextImageKHR;
	PFN_vkWaitForFences WaitForFences;
	PFN_vkWaitSemaphores WaitSemaphores;
	PFN_vkQueueWaitIdle QueueWaitIdle;
	PFN_vkDeviceWaitIdle DeviceWaitIdle;
	PFN_vkGetDeviceQueue GetDeviceQueue;
	PFN_vkGetDeviceQueue2 GetDeviceQueue2;
	PFN_vkCreateCommandPool CreateCommandPool;
	PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
	PFN_vkFreeCommandBuffers FreeCommandBuffers;
	PFN_vkDestroyCommandPool DestroyCommandPool;
	PFN_vkResetCommandPool ResetCommandPool;
	PFN_vkCmdDraw CmdDraw;
	PFN_vkCmdDrawIndexed CmdDrawIndexed;
	PFN_vkCmdDrawIndirect CmdDrawIndirect;
	PFN_vkCmdDrawIndexedIndirect CmdDrawIndexedIndirect;
	PFN_vkCmdDrawIndirectCount CmdDrawIndirectCount;
	PFN_vkCmdDrawIndexedIndirectCount CmdDrawIndexedIndirectCount;
	PFN_vkCmdDispatch CmdDispatch;
	PFN_vkCmdDispatchIndirect CmdDispatchIndirect;
	PFN_vkCmdDispatchBase CmdDispatchBase;
	PFN_vkCmdDrawMultiEXT CmdDrawMultiEXT;
	PFN_vkCmdDrawMultiIndexedEXT CmdDrawMultiIndexedEXT;
	PFN_vkCmdDrawIndirectByteCountEXT CmdDrawIndirectByteCountEXT;
	PFN_vkCmdDrawMeshTasksEXT CmdDrawMeshTasksEXT;
	PFN_vkCmdDrawMeshTasksIndirectEXT CmdDrawMeshTasksIndirectEXT;
	PFN_vkCmdDrawMeshTasksIndirectCountEXT CmdDrawMeshTasksIndirectCountEXT;
	PFN_vkCreateQueryPool CreateQueryPool;
	PFN_vkDestroyQueryPool DestroyQueryPool;
	PFN_vkCmdBeginQuery CmdBeginQuery;
	PFN_vkCmdEndQuery CmdEndQuery;
	PFN_vkCmdBeginQueryIndexedEXT CmdBeginQueryIndexedEXT;
	PFN_vkCmdEndQueryIndexedEXT CmdEndQueryIndexedEXT;
	// work: the layer counts each zone's work on the device
	// (FRAMESCOPE_WORK=1, pipelineStatisticsQuery enabled).
	int work;
	// frame_boundary: the program enabled VK_EXT_frame_boundary;
	// frame_boundary_strip: the device below does not offer it, so the
	// layer, which offered it, takes it out of what goes down.
	int frame_boundary, frame_boundary_strip;
	// hide_calibrated: the layer enabled a calibrated-timestamps extension
	// the program did not; its commands are not the program's to find.
	int hide_calibrated;
	struct fs_device *next;
} fs_device;

// Objects by key (instances, devices), under one lock: looked up on
// every hooked call, changed only when one is made or destroyed.
fs_instance *fs_instance_of(const void *dispatchable);
fs_device *fs_device_of(const void *dispatchable);
void fs_add_instance(fs_instance *);
fs_instance *fs_remove_instance(void *key);
void fs_add_device(fs_device *);
fs_device *fs_remove_device(void *key);

// The Go library's entry points, all NULL until it is loaded (and when it
// could not be: the layer then passes every call through).
typedef struct {
	// The handles are the layer's; gipa, gdpa and set_loader_data are
	// the next layer's entry points and the loader's callback, through
	// which the profiler calls Vulkan for the device: down the chain from
	// here, never through the loader's top and the layers above.
	void (*device_created)(void *instance, void *physical, void *device, void *gipa, void *gdpa, void *set_loader_data,
			       uint32_t api_version, uint32_t flags, uint32_t nqueues, const uint32_t *families,
			       const uint32_t *counts);
	void (*device_destroyed)(void *device);
	void (*queue)(void *device, void *queue, uint32_t family, uint32_t index);
	void (*pool)(void *device, uint64_t pool, uint32_t family);
	void (*pool_gone)(void *device, uint64_t pool, int destroyed);
	void (*allocated)(void *device, uint64_t pool, uint32_t n, void *const *cmds, int secondary);
	void (*freed)(void *device, uint32_t n, void *const *cmds);
	// cmd_begin makes the command buffer just begun a recording, and
	// returns its zone path for C, or NULL: its zones then go through Go.
	framescope_czones *(*cmd_begin)(void *cmd, uint32_t flags);
	// name returns the profiler.Name of a zone of kind with label.
	uint32_t (*name)(const char *label, int kind);
	void (*cmd_end)(void *cmd);
	void (*execute)(void *primary, uint32_t n, void *const *secondaries);
	void (*zone_begin)(void *cmd, const char *name, int kind);
	void (*zone_end)(void *cmd, int kind);
	uint64_t (*cpu_begin)(int what, int tid);
	void (*cpu_end)(uint64_t span);
	// submit_begin begins a submission's span (cpu_end ends it) and
	// names the command buffers it carries.
	uint64_t (*submit_begin)(void *queue, int tid, uint32_t n, void *const *cmds);
	void (*present)(void *queue);
	void (*boundary)(void); // a frame end the program marked (VK_EXT_frame_boundary)
	// stats_query: the program begins (begun) or ended a pipeline
	// statistics query of its own in cmd (queries.c).
	void (*stats_query)(void *cmd, int begun);
	void (*at_exit)(void);
} fs_golib;

extern fs_golib fs_go;
extern int fs_go_loaded;
void fs_load_go(void);

// Device flags for device_created.
enum {
	FS_DEV_HOST_QUERY_RESET = 1,
	FS_DEV_CALIBRATED = 2,
	FS_DEV_DEBUG_UTILS = 4,
	FS_DEV_PROPS2 = 8,
	FS_DEV_PIPELINE_STATS = 16, // pipelineStatisticsQuery enabled, asked for with FRAMESCOPE_WORK=1
};

// Zone kinds: what began the zone, so that an end closes its own kind.
enum {
	FS_ZONE_LABEL = 1,
	FS_ZONE_MARKER = 2,
	FS_ZONE_RENDER_PASS = 3,
	FS_ZONE_RENDERING = 4,
	FS_ZONE_COMMAND_BUFFER = 5, // a primary, from its begin to its end
	FS_ZONE_SECONDARY = 6,      // a secondary, likewise
	FS_ZONE_DRAW = 7,           // a draw command (FRAMESCOPE_DRAWS=1)
	FS_ZONE_DISPATCH = 8,       // a dispatch command, likewise
	FS_ZONE_KINDS = 9,
};

// CPU span kinds.
enum {
	FS_CPU_SUBMIT = 1,
	FS_CPU_PRESENT,
	FS_CPU_ACQUIRE,
	FS_CPU_WAIT_FENCES,
	FS_CPU_WAIT_SEMAPHORES,
	FS_CPU_QUEUE_WAIT_IDLE,
	FS_CPU_DEVICE_WAIT_IDLE,
};

// DOWN calls the next layer's f where it has it. The loader hands a
// program the layer's hook of a command whose extension the program did
// not enable (asked of the instance, the loader answers for every
// device), and tolerates its call, as the layer must: the call then goes
// nowhere, as it would without the layer.
#define DOWN(v, f, args)        \
	do {                    \
		if ((v)->f)     \
			(v)->f args; \
	} while (0)

PFN_vkVoidFunction fs_device_hook(const char *name);
PFN_vkVoidFunction fs_draw_hook(const char *name);
PFN_vkVoidFunction fs_query_hook(const char *name);

// A table of hooks by command name, and its lookup.
typedef struct {
	const char *name;
	PFN_vkVoidFunction fn;
} fs_hook;
#define FS_HOOK(n, f) {n, (PFN_vkVoidFunction)f}
PFN_vkVoidFunction fs_find_hook(const fs_hook *hooks, size_t n, const char *name);

// A command buffer as the C half records it (cmds.c): its zones open,
// innermost last, each through the C zone path (pair) or through Go.
#define FS_MAX_OPEN 64
typedef struct fs_cmd {
	void *cmd; // NULL while unused
	fs_device *dev;
	uint64_t pool;
	int secondary;
	framescope_czones *cz; // between begin and end, or NULL
	uint32_t depth; // open zones on the stack
	// Zones open past the stack (through Go), by kind: an end of a kind
	// with one open there is Go's, whose zones were all begun after the
	// stack's (labels and render passes may interleave, so the kind, not
	// the count, says whose the innermost of a kind is).
	uint32_t deeper[FS_ZONE_KINDS];
	struct {
		int64_t pair;
		int kind, go;
	} open[FS_MAX_OPEN];
	struct fs_cmd *next;
} fs_cmd;

void fs_cmd_add(fs_device *, void *cmd, uint64_t pool, int secondary);
void fs_cmd_remove(void *cmd);
void fs_cmd_remove_pool(uint64_t pool);
void fs_cmd_remove_device(fs_device *);
fs_cmd *fs_cmd_get(void *cmd);
void fs_cmd_begin(fs_cmd *, void *cmd, uint32_t flags);
void fs_cmd_end(fs_cmd *, void *cmd);
void fs_zone_begin(fs_cmd *, void *cmd, const char *label, int kind);
void fs_zone_end(fs_cmd *, void *cmd, int kind);

// CMD looks up a command buffer's state (fc, NULL for one the layer never
// saw allocated) and its device (v): a hooked command pays one lookup.
#define CMD(h)                     \
	fs_cmd *fc = fs_cmd_get(h); \
	fs_device *v = fc ? fc->dev : fs_device_of(h)

// Names (names.c): FS_NO_NAME where the zone cannot be named (no profiler).
#define FS_NO_NAME UINT32_MAX
uint32_t fs_name(const char *label, int kind);
VkResult fs_create_device(VkPhysicalDevice, const VkDeviceCreateInfo *, const VkAllocationCallbacks *, VkDevice *);

// VK_EXT_frame_boundary (boundary.c): offered where the device below does
// not offer it; its structs taken out of the chains that go down, and
// the program's links put back after each call.
VKAPI_ATTR VkResult VKAPI_CALL fs_EnumerateDeviceExtensionProperties(VkPhysicalDevice, const char *, uint32_t *, VkExtensionProperties *);
VKAPI_ATTR void VKAPI_CALL fs_GetPhysicalDeviceFeatures2(VkPhysicalDevice, VkPhysicalDeviceFeatures2 *);
typedef struct {
	const void **at, *was;
	int strip;
} fs_boundary_undo;
void fs_boundary_device_ask(fs_instance *, VkPhysicalDevice, VkDeviceCreateInfo *ci, const char **exts, int *uses, fs_boundary_undo *);
void fs_boundary_device_done(const fs_boundary_undo *);
typedef struct {
	uint32_t n;
	struct {
		const void **at, *was;
	} *links;
	void *copy;
} fs_boundary_call;
int fs_boundary_submit(fs_device *, uint32_t n, const VkSubmitInfo **s1, const VkSubmitInfo2 **s2, fs_boundary_call *);
int fs_boundary_present(fs_device *, const VkPresentInfoKHR **info, VkPresentInfoKHR *copy, fs_boundary_call *);
void fs_boundary_restore(fs_boundary_call *);

#endif
