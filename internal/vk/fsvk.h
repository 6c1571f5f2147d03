// Minimal Vulkan declarations for the entry points vulkan-go lacks. They are
// written out here, not taken from <vulkan/vulkan.h>, so that this package
// builds without libvulkan-dev. Layouts and values are Vulkan's ABI.
#ifndef FSVK_H
#define FSVK_H

#include <stdint.h>
#include <stddef.h>

typedef int32_t fsVkResult;
typedef uint32_t fsVkBool32;
typedef void *fsVkInstance;
typedef void *fsVkPhysicalDevice;
typedef void *fsVkDevice;
typedef void *fsVkCommandBuffer;
typedef uint64_t fsVkQueryPool;
typedef uint64_t fsVkDebugUtilsMessenger;
typedef void (*fsPFN)(void);

// VkCalibratedTimestampInfoKHR == VkCalibratedTimestampInfoEXT.
typedef struct {
	int32_t sType; // 1000184000
	const void *pNext;
	int32_t timeDomain;
} fsCalibratedTimestampInfo;

typedef struct {
	int32_t sType; // 1000128002 VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT
	const void *pNext;
	const char *pLabelName;
	float color[4];
} fsDebugUtilsLabel;

typedef struct {
	int32_t sType; // 1000261000 VkPhysicalDeviceHostQueryResetFeatures
	void *pNext;
	fsVkBool32 hostQueryReset;
} fsHostQueryResetFeatures;

typedef struct {
	int32_t sType; // 1000059000 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2
	void *pNext;
	fsVkBool32 features[55]; // VkPhysicalDeviceFeatures: 55 VkBool32
} fsPhysicalDeviceFeatures2;

// Loader.
int fs_open_loader(const char *name, char *err, size_t errlen);
void *fs_get_instance_proc_addr_ptr(void);
fsPFN fs_instance_proc(fsVkInstance instance, const char *name);
void fs_destroy_device_via(fsVkInstance instance, fsVkDevice device); // through the loader

// Trampolines: call a loaded entry point.
fsVkResult fs_get_calibrateable_time_domains(fsPFN fn, fsVkPhysicalDevice pd, uint32_t *count, int32_t *domains);
typedef struct {
	uint64_t ts[4];
	uint64_t maxDeviation;
	int32_t rc;
} fsCalibrated;
// fs_calibrated reads up to four time domains; everything passes by value,
// so Go hands it no pointers (and allocates nothing).
fsCalibrated fs_calibrated(fsPFN fn, fsVkDevice dev, uint32_t count, int32_t d0, int32_t d1, int32_t d2, int32_t d3);
void fs_reset_query_pool(fsPFN fn, fsVkDevice dev, fsVkQueryPool pool, uint32_t first, uint32_t count);
void fs_cmd_begin_label(fsPFN fn, fsVkCommandBuffer cmd, const char *name);
void fs_cmd_end_label(fsPFN fn, fsVkCommandBuffer cmd);
void fs_cmd_write_timestamp(fsPFN fn, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query);
int fs_host_query_reset_supported(fsPFN features2, fsVkPhysicalDevice pd);

// VkPhysicalDeviceDriverProperties read through vkGetPhysicalDeviceProperties2.
typedef struct {
	uint32_t driverID;
	char driverName[256];
	char driverInfo[256];
} fsDriverInfo;
int fs_get_driver_info(fsPFN props2, fsVkPhysicalDevice pd, fsDriverInfo *out);
// fs_get_device_uuid writes VkPhysicalDeviceIDProperties.deviceUUID (16 bytes).
void fs_get_device_uuid(fsPFN props2, fsVkPhysicalDevice pd, uint8_t *out);

// Query copies for readback without driver calls: a barrier making all
// earlier work on the queue finish before the copy, the copy, and a barrier
// making the copy visible to the host.
typedef uint64_t fsVkBuffer;
void fs_cmd_copy_queries(fsPFN barrier, fsPFN copy, fsVkCommandBuffer cmd, fsVkQueryPool pool,
	uint32_t first, uint32_t count, fsVkBuffer buf, uint64_t offset, uint64_t stride, uint32_t flags, int pre, int post);

// Creation and submission without vulkan-go's struct marshalling, whose
// C copies of slices can be freed by a finalizer while the call runs.
// enables are VkValidationFeatureEnableEXT values, chained in a
// VkValidationFeaturesEXT when nen > 0; messenger chains the validation
// messenger's create info, so that vkCreateInstance and vkDestroyInstance
// report too.
fsVkResult fs_create_instance(const char *app, uint32_t api, const char *const *layers, uint32_t nl,
	const char *const *exts, uint32_t ne, const int32_t *enables, uint32_t nen, int messenger, fsVkInstance *out);
fsVkResult fs_create_device(fsVkInstance inst, fsVkPhysicalDevice pd, const uint32_t *families, uint32_t nf,
	const char *const *exts, uint32_t ne, int hostQueryReset, int pipelineStats, fsVkDevice *out);
fsVkResult fs_queue_submit(fsPFN submit, void *queue, void *const *cmds, uint32_t n, uint64_t fence);
void fs_cmd_wait_event(fsPFN wait, fsVkCommandBuffer cmd, uint64_t event);

// Enumerations into caller memory: names as cap slots of 256 bytes.
// Each returns the number written, or a negative VkResult.
int fs_instance_extensions(const char *layer, char *names, uint32_t cap); // layer NULL: the loader's
int fs_instance_layers(char *names, uint32_t cap);
int fs_device_extensions(fsPFN enumerate, fsVkPhysicalDevice pd, char *names, uint32_t cap);
typedef struct {
	uint32_t flags, count, validBits;
} fsFamily;
int fs_queue_families(fsPFN families, fsVkPhysicalDevice pd, fsFamily *out, uint32_t cap);

// Validation messages.
fsVkResult fs_create_messenger(fsPFN create, fsVkInstance instance, fsVkDebugUtilsMessenger *out);
void fs_destroy_messenger(fsPFN destroy, fsVkInstance instance, fsVkDebugUtilsMessenger m);
uint64_t fs_messages_count(int severity_index);
int fs_messages_take(char *buf, int buflen);
uint64_t fs_messages_head(void);
int fs_messages_at(uint64_t i, char *buf, int buflen);

#endif
