// The loader's side of the layer: negotiation, the proc-address queries,
// and instance creation and destruction, with the maps of what was made.
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_rwlock_t fs_lock = PTHREAD_RWLOCK_INITIALIZER;
static fs_instance *fs_instances;
static fs_device *fs_devices;

fs_instance *fs_instance_of(const void *d) {
	void *key = fs_key(d);
	pthread_rwlock_rdlock(&fs_lock);
	fs_instance *i = fs_instances;
	while (i && i->key != key)
		i = i->next;
	pthread_rwlock_unlock(&fs_lock);
	return i;
}

// fs_devices_gen counts changes to the devices, so that a thread's cached
// last device (looked up on every hooked command) is used only while no
// device was added or removed since.
static uint64_t fs_devices_gen = 1;
static FS_TLS struct {
	void *key;
	fs_device *dev;
	uint64_t gen;
} fs_last_device;

fs_device *fs_device_of(const void *d) {
	void *key = fs_key(d);
	uint64_t gen = __atomic_load_n(&fs_devices_gen, __ATOMIC_ACQUIRE);
	if (fs_last_device.key == key && fs_last_device.gen == gen)
		return fs_last_device.dev;
	pthread_rwlock_rdlock(&fs_lock);
	fs_device *v = fs_devices;
	while (v && v->key != key)
		v = v->next;
	gen = fs_devices_gen;
	pthread_rwlock_unlock(&fs_lock);
	fs_last_device.key = key;
	fs_last_device.dev = v;
	fs_last_device.gen = gen;
	return v;
}

void fs_add_instance(fs_instance *i) {
	pthread_rwlock_wrlock(&fs_lock);
	i->next = fs_instances;
	fs_instances = i;
	pthread_rwlock_unlock(&fs_lock);
}

fs_instance *fs_remove_instance(void *key) {
	pthread_rwlock_wrlock(&fs_lock);
	fs_instance **p = &fs_instances;
	while (*p && (*p)->key != key)
		p = &(*p)->next;
	fs_instance *i = *p;
	if (i)
		*p = i->next;
	pthread_rwlock_unlock(&fs_lock);
	return i;
}

void fs_add_device(fs_device *v) {
	pthread_rwlock_wrlock(&fs_lock);
	v->next = fs_devices;
	fs_devices = v;
	__atomic_add_fetch(&fs_devices_gen, 1, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&fs_lock);
}

fs_device *fs_remove_device(void *key) {
	pthread_rwlock_wrlock(&fs_lock);
	fs_device **p = &fs_devices;
	while (*p && (*p)->key != key)
		p = &(*p)->next;
	fs_device *v = *p;
	if (v)
		*p = v->next;
	__atomic_add_fetch(&fs_devices_gen, 1, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&fs_lock);
	return v;
}

static int has_ext(const VkInstanceCreateInfo *ci, const char *name) {
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(ci->ppEnabledExtensionNames[i], name) == 0)
			return 1;
	return 0;
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *alloc,
							 VkInstance *out) {
	VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)ci->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerInstanceCreateInfo *)link->pNext;
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	VkLayerInstanceLink *below = link->u.pLayerInfo->pNext;
	link->u.pLayerInfo = below;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance");
	uint32_t api = ci->pApplicationInfo ? ci->pApplicationInfo->apiVersion : 0;
	int props2 = api >= VK_API_VERSION_1_1 || has_ext(ci, VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);
	VkResult r = VK_ERROR_EXTENSION_NOT_PRESENT;
	if (!props2 && ci->enabledExtensionCount < 512) {
		// Vulkan 1.0 without VK_KHR_get_physical_device_properties2: the
		// calibrated-timestamps extensions need it, so the layer asks.
		const char *exts[513];
		memcpy(exts, ci->ppEnabledExtensionNames, ci->enabledExtensionCount * sizeof(char *));
		exts[ci->enabledExtensionCount] = VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME;
		VkInstanceCreateInfo c = *ci;
		c.enabledExtensionCount++;
		c.ppEnabledExtensionNames = exts;
		r = create(&c, alloc, out);
		props2 = r == VK_SUCCESS;
	}
	if (r != VK_SUCCESS) {
		link->u.pLayerInfo = below; // the layers below moved it along
		r = create(ci, alloc, out);
	}
	if (r != VK_SUCCESS)
		return r;
	fs_instance *i = calloc(1, sizeof *i);
	if (!i)
		return r; // the layer stays out of this instance
	i->key = fs_key(*out);
	i->handle = *out;
	i->gipa = gipa;
	i->api_version = ci->pApplicationInfo ? ci->pApplicationInfo->apiVersion : 0;
	i->debug_utils = has_ext(ci, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
	i->props2 = props2;
#define GET(f) i->f = (PFN_vk##f)gipa(*out, "vk" #f)
	GET(DestroyInstance);
	GET(EnumeratePhysicalDevices);
	GET(EnumerateDeviceExtensionProperties);
	GET(GetPhysicalDeviceProperties);
	GET(GetPhysicalDeviceFeatures);
	if (i->api_version >= VK_API_VERSION_1_1)
		GET(GetPhysicalDeviceFeatures2);
	else if (props2)
		i->GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)gipa(*out, "vkGetPhysicalDeviceFeatures2KHR");
#undef GET
	fs_profiler_procs(i);
	fs_add_instance(i);
	fs_load_go();
	return r;
}

// The instance-level commands the profiler calls (internal/vk/procs.c
// and instance.go), at most 16.
static const char *const profiler_names[] = {
    "vkGetDeviceProcAddr",
    "vkDestroyInstance",
    "vkEnumeratePhysicalDevices",
    "vkGetPhysicalDeviceProperties",
    "vkGetPhysicalDeviceFeatures",
    "vkGetPhysicalDeviceMemoryProperties",
    "vkGetPhysicalDeviceQueueFamilyProperties",
    "vkEnumerateDeviceExtensionProperties",
    "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR",
    "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT",
    "vkGetPhysicalDeviceFeatures2",
    "vkGetPhysicalDeviceFeatures2KHR",
    "vkGetPhysicalDeviceProperties2",
    "vkGetPhysicalDeviceProperties2KHR",
};

void fs_profiler_procs(fs_instance *i) {
	for (size_t k = 0; k < sizeof profiler_names / sizeof *profiler_names; k++)
		i->profiler_procs[k] = i->gipa(i->handle, profiler_names[k]);
}

PFN_vkVoidFunction VKAPI_CALL fs_profiler_gipa(VkInstance instance, const char *name) {
	fs_instance *i = instance ? fs_instance_of(instance) : NULL;
	if (!i)
		return NULL;
	for (size_t k = 0; k < sizeof profiler_names / sizeof *profiler_names; k++)
		if (strcmp(name, profiler_names[k]) == 0)
			return i->profiler_procs[k];
	return NULL; // nothing else: an answer now could be the top's
}

static VKAPI_ATTR void VKAPI_CALL fs_DestroyInstance(VkInstance instance, const VkAllocationCallbacks *alloc) {
	if (!instance)
		return;
	fs_instance *i = fs_remove_instance(fs_key(instance));
	if (!i)
		return;
	i->DestroyInstance(instance, alloc);
	free(i);
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
						       const VkAllocationCallbacks *alloc, VkDevice *out) {
	return fs_create_device(pd, ci, alloc, out);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL framescope_GetDeviceProcAddr(VkDevice device, const char *name);

// hidden reports whether name is a command of the calibrated-timestamps
// extensions, which the layer enables where the program did not: asked
// for by the program then, it is NULL, as without the layer (the
// profiler finds its own through the next layer, not through this).
static int hidden(const char *name) {
	return strcmp(name, "vkGetCalibratedTimestampsEXT") == 0 || strcmp(name, "vkGetCalibratedTimestampsKHR") == 0;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL framescope_GetInstanceProcAddr(VkInstance instance, const char *name) {
	if (strcmp(name, "vkGetInstanceProcAddr") == 0)
		return (PFN_vkVoidFunction)framescope_GetInstanceProcAddr;
	if (strcmp(name, "vkCreateInstance") == 0)
		return (PFN_vkVoidFunction)fs_CreateInstance;
	if (strcmp(name, "vkDestroyInstance") == 0)
		return (PFN_vkVoidFunction)fs_DestroyInstance;
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)fs_CreateDevice;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)framescope_GetDeviceProcAddr;
	if (!instance)
		return NULL;
	fs_instance *i = fs_instance_of(instance);
	if (!i)
		return NULL;
	PFN_vkVoidFunction next = i->gipa(instance, name);
	if (next && strcmp(name, "vkEnumerateDeviceExtensionProperties") == 0)
		return (PFN_vkVoidFunction)fs_EnumerateDeviceExtensionProperties;
	if (next && (strcmp(name, "vkGetPhysicalDeviceFeatures2") == 0 || strcmp(name, "vkGetPhysicalDeviceFeatures2KHR") == 0))
		return (PFN_vkVoidFunction)fs_GetPhysicalDeviceFeatures2;
	// Device commands asked of the instance: hooked where the next layer
	// has them.
	PFN_vkVoidFunction hook = next ? fs_device_hook(name) : NULL;
	return hook ? hook : next;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL framescope_GetDeviceProcAddr(VkDevice device, const char *name) {
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)framescope_GetDeviceProcAddr;
	fs_device *v = device ? fs_device_of(device) : NULL;
	if (!v)
		return NULL;
	if (v->hide_calibrated && hidden(name))
		return NULL; // as without the layer, which enabled the extension
	PFN_vkVoidFunction next = v->gdpa(device, name);
	PFN_vkVoidFunction hook = next ? fs_device_hook(name) : NULL;
	return hook ? hook : next;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
	if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (v->loaderLayerInterfaceVersion > 2)
		v->loaderLayerInterfaceVersion = 2;
	if (v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->pfnGetInstanceProcAddr = framescope_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = framescope_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
