// The checker's application: its Vulkan, made in C, as an application
// that owns its instance, device, queues, command pools, fences and
// semaphores would make it. The Go side hands the profiler only the
// dispatchable handles, converted to vulkan-go's types.
#ifndef LOOPCHECK_APP_H
#define LOOPCHECK_APP_H

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

typedef struct lc_app lc_app;

typedef struct {
	int validation;     // the Khronos validation layer, synchronization checks on
	int host_reset;     // enable hostQueryReset where offered
	int calibrated;     // enable VK_KHR/EXT_calibrated_timestamps where offered
	int queues;         // queues to create in each family with timestamps (at most its count)
	const char *device; // a substring of the device's name; NULL or "": the first GPU, else the first device
	// pipeline_stats enables pipelineStatisticsQuery where offered, and
	// makes a compute pipeline of count_spirv (count_words words, a
	// workgroup of 64 invocations) for lc_dispatch.
	int pipeline_stats;
	const uint32_t *count_spirv;
	size_t count_words;
	// api10 makes the instance with apiVersion 1.0 (as Gio does): no
	// Vulkan 1.1 call, so no host query reset (its feature is read
	// through vkGetPhysicalDeviceFeatures2) and no calibrated timestamps
	// (they need VK_KHR_get_physical_device_properties2).
	int api10;
	// Enabled where the device offers them (not with api10): timeline
	// semaphores; VK_KHR_synchronization2, which lc_submit and lc_fill
	// then use (vkQueueSubmit2KHR, vkCmdPipelineBarrier2KHR); and
	// VK_KHR_dynamic_rendering (lc_begin_rendering).
	int timeline, sync2, rendering;
} lc_config;

typedef struct {
	uint32_t family, index, flags, valid_bits;
	VkQueue queue;
} lc_queue;

int lc_create(const lc_config *cfg, lc_app **out, char *err, size_t errlen);
void lc_destroy(lc_app *a);
// The device alone, for an application that makes its device again on
// the same instance.
int lc_destroy_device(lc_app *a);
int lc_create_device(lc_app *a, char *err, size_t errlen);

VkInstance lc_instance(lc_app *a);
VkPhysicalDevice lc_physical(lc_app *a);
VkDevice lc_device(lc_app *a);
const char *lc_device_name(lc_app *a);
int lc_queue_count(lc_app *a);
lc_queue lc_queue_at(lc_app *a, int i);
int lc_has_host_reset(lc_app *a);
uint32_t lc_api_version(lc_app *a);
int lc_has_calibrated(lc_app *a);
int lc_has_debug_utils(lc_app *a);
int lc_has_pipeline_stats(lc_app *a);
int lc_has_timeline(lc_app *a);
int lc_has_sync2(lc_app *a);
int lc_has_rendering(lc_app *a);
// groups workgroups of the count pipeline: 64*groups compute invocations.
void lc_dispatch(lc_app *a, VkCommandBuffer c, uint32_t groups);

VkCommandPool lc_create_pool(lc_app *a, uint32_t family);
void lc_destroy_pool(lc_app *a, VkCommandPool p);
int lc_reset_pool(lc_app *a, VkCommandPool p);
VkCommandBuffer lc_alloc_cmd(lc_app *a, VkCommandPool p, int secondary);
int lc_begin_cmd(VkCommandBuffer c, int secondary);
// lc_begin_reusable begins a primary to be submitted many times, one
// execution at a time (no usage flag).
int lc_begin_reusable(VkCommandBuffer c);
// lc_begin_reusable_secondary begins a secondary to be executed many
// times, outside a render pass, one execution at a time.
int lc_begin_reusable_secondary(VkCommandBuffer c);
// lc_begin_simultaneous begins a primary or secondary to be pending many
// times at once (VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT).
int lc_begin_simultaneous(VkCommandBuffer c, int secondary);
int lc_end_cmd(VkCommandBuffer c);
void lc_execute(VkCommandBuffer primary, uint32_t n, VkCommandBuffer s0, VkCommandBuffer s1, VkCommandBuffer s2, VkCommandBuffer s3);
// A little GPU work: fill 4 bytes of the work buffer at offset, after a
// transfer-to-transfer barrier when barrier is set.
void lc_fill(lc_app *a, VkCommandBuffer c, uint64_t offset, uint32_t value, int barrier);
uint64_t lc_work_size(void);

VkFence lc_create_fence(lc_app *a);
void lc_destroy_fence(lc_app *a, VkFence f);
VkSemaphore lc_create_semaphore(lc_app *a);
void lc_destroy_semaphore(lc_app *a, VkSemaphore s);
// One batch: up to 8 command buffers, waiting on wait (may be null) at
// every stage, signalling signal (may be null) and fence (may be null).
// A timeline semaphore's value is wait_value or signal_value (0 for a
// binary one). With synchronization2 on, through vkQueueSubmit2KHR.
int lc_submit(lc_app *a, VkQueue q, uint32_t n, const VkCommandBuffer *cmds, VkSemaphore wait, uint64_t wait_value,
	VkSemaphore signal, uint64_t signal_value, VkFence fence);
// lc_use_sync2 makes lc_submit and lc_fill use synchronization2, where
// enabled.
void lc_use_sync2(lc_app *a, int on);
// A timeline semaphore at 0, and a wait for it to reach value (at most
// timeout ns).
VkSemaphore lc_create_timeline(lc_app *a);
int lc_wait_timeline(lc_app *a, VkSemaphore s, uint64_t value, uint64_t timeout);
// A dynamic rendering instance with no attachments, on a primary
// outside one (VK_KHR_dynamic_rendering).
void lc_begin_rendering(lc_app *a, VkCommandBuffer c);
void lc_begin_rendering_flags(lc_app *a, VkCommandBuffer c, VkRenderingFlags flags);
void lc_end_rendering(lc_app *a, VkCommandBuffer c);
// A secondary that continues such an instance, executable more than once
// at a time.
int lc_begin_continuing(VkCommandBuffer c);

// A second device on the application's physical device, alive beside its
// own: one queue (the first family with timestamps), a command pool, a
// command buffer and a fence, used one frame at a time.
typedef struct lc_twin lc_twin;
int lc_twin_create(lc_app *a, lc_twin **out, char *err, size_t errlen);
void lc_twin_destroy(lc_twin *t);
VkDevice lc_twin_device(lc_twin *t);
lc_queue lc_twin_queue(lc_twin *t);
// lc_twin_begin waits for the last submission, resets the pool and
// begins the command buffer, which it returns (NULL: failed).
VkCommandBuffer lc_twin_begin(lc_twin *t);
// lc_twin_submit ends the command buffer and submits it with the fence.
int lc_twin_submit(lc_twin *t);
// lc_twin_wait waits for the last submission, if any.
int lc_twin_wait(lc_twin *t);
// Waits for f (at most timeout ns) and resets it.
int lc_wait_fence(lc_app *a, VkFence f, uint64_t timeout);
int lc_wait_idle(lc_app *a);

// lc_pin keeps the drivers loaded for the life of the process (NVIDIA's
// does not stand many unloads).
int lc_pin(void);

// The validation layer's warnings and errors since the process started,
// and the latest of them.
uint64_t lc_messages(char *last, size_t len);

#endif
