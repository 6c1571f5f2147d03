// A Vulkan layer that behaves as vkBasalt does: it holds one lock of its
// own while it calls down the chain from the commands it intercepts,
// and takes it again in every command it intercepts. A layer below it
// that calls back up through the loader's top, from inside one of those
// calls, re-enters it: the lock (error-checking) then says so, and the
// layer prints "locklayer: re-entered" and aborts instead of hanging as
// vkBasalt does.
//
// Built as a shared library; its manifest (written by the test) names it
// VK_LAYER_FSTEST_lock.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&lock, &a);
}

static void take(const char *what) {
	pthread_once(&once, init);
	if (pthread_mutex_lock(&lock) != 0) {
		fprintf(stderr, "locklayer: re-entered in %s: a layer below called back up while this one held its lock\n", what);
		abort();
	}
}

static void give(void) { pthread_mutex_unlock(&lock); }

// One instance and one device at a time are enough for the tests.
static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;

#define NEXT_I(inst, name) ((PFN_##name)next_gipa(inst, #name))
#define NEXT_D(dev, name) ((PFN_##name)next_gdpa(dev, #name))

static PFN_vkBeginCommandBuffer begin_cmd;
static PFN_vkEndCommandBuffer end_cmd;
static PFN_vkQueueSubmit submit;
static PFN_vkEnumerateDeviceExtensionProperties enum_exts;
static PFN_vkCreateQueryPool create_query_pool;
static PFN_vkCmdWriteTimestamp write_ts;
static PFN_vkCmdResetQueryPool reset_qp;

static VKAPI_ATTR VkResult VKAPI_CALL l_BeginCommandBuffer(VkCommandBuffer cmd, const VkCommandBufferBeginInfo *info) {
	take("vkBeginCommandBuffer");
	VkResult r = begin_cmd(cmd, info);
	give();
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_EndCommandBuffer(VkCommandBuffer cmd) {
	take("vkEndCommandBuffer");
	VkResult r = end_cmd(cmd);
	give();
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_QueueSubmit(VkQueue q, uint32_t n, const VkSubmitInfo *s, VkFence f) {
	take("vkQueueSubmit");
	VkResult r = submit(q, n, s, f);
	give();
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_EnumerateDeviceExtensionProperties(VkPhysicalDevice pd, const char *layer, uint32_t *n,
									   VkExtensionProperties *p) {
	take("vkEnumerateDeviceExtensionProperties");
	VkResult r = enum_exts(pd, layer, n, p);
	give();
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateQueryPool(VkDevice d, const VkQueryPoolCreateInfo *ci, const VkAllocationCallbacks *a,
							 VkQueryPool *out) {
	take("vkCreateQueryPool");
	VkResult r = create_query_pool(d, ci, a, out);
	give();
	return r;
}

static VKAPI_ATTR void VKAPI_CALL l_CmdWriteTimestamp(VkCommandBuffer cmd, VkPipelineStageFlagBits s, VkQueryPool p, uint32_t q) {
	take("vkCmdWriteTimestamp");
	write_ts(cmd, s, p, q);
	give();
}

static VKAPI_ATTR void VKAPI_CALL l_CmdResetQueryPool(VkCommandBuffer cmd, VkQueryPool p, uint32_t first, uint32_t n) {
	take("vkCmdResetQueryPool");
	reset_qp(cmd, p, first, n);
	give();
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *a, VkInstance *out) {
	VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)ci->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerInstanceCreateInfo *)link->pNext;
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	VkResult r = ((PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance"))(ci, a, out);
	if (r == VK_SUCCESS)
		enum_exts = NEXT_I(*out, vkEnumerateDeviceExtensionProperties);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL l_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci, const VkAllocationCallbacks *a,
						      VkDevice *out) {
	VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)ci->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerDeviceCreateInfo *)link->pNext;
	if (!link)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	VkResult r = ((PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice"))(pd, ci, a, out);
	if (r != VK_SUCCESS)
		return r;
	begin_cmd = NEXT_D(*out, vkBeginCommandBuffer);
	end_cmd = NEXT_D(*out, vkEndCommandBuffer);
	submit = NEXT_D(*out, vkQueueSubmit);
	create_query_pool = NEXT_D(*out, vkCreateQueryPool);
	write_ts = NEXT_D(*out, vkCmdWriteTimestamp);
	reset_qp = NEXT_D(*out, vkCmdResetQueryPool);
	return r;
}

static PFN_vkVoidFunction hook(const char *name) {
	if (strcmp(name, "vkBeginCommandBuffer") == 0)
		return (PFN_vkVoidFunction)l_BeginCommandBuffer;
	if (strcmp(name, "vkEndCommandBuffer") == 0)
		return (PFN_vkVoidFunction)l_EndCommandBuffer;
	if (strcmp(name, "vkQueueSubmit") == 0)
		return (PFN_vkVoidFunction)l_QueueSubmit;
	if (strcmp(name, "vkCreateQueryPool") == 0)
		return (PFN_vkVoidFunction)l_CreateQueryPool;
	if (strcmp(name, "vkCmdWriteTimestamp") == 0)
		return (PFN_vkVoidFunction)l_CmdWriteTimestamp;
	if (strcmp(name, "vkCmdResetQueryPool") == 0)
		return (PFN_vkVoidFunction)l_CmdResetQueryPool;
	return NULL;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL locklayer_GetDeviceProcAddr(VkDevice d, const char *name) {
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)locklayer_GetDeviceProcAddr;
	PFN_vkVoidFunction h = hook(name);
	return h ? h : next_gdpa(d, name);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL locklayer_GetInstanceProcAddr(VkInstance inst, const char *name) {
	if (strcmp(name, "vkGetInstanceProcAddr") == 0)
		return (PFN_vkVoidFunction)locklayer_GetInstanceProcAddr;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)locklayer_GetDeviceProcAddr;
	if (strcmp(name, "vkCreateInstance") == 0)
		return (PFN_vkVoidFunction)l_CreateInstance;
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)l_CreateDevice;
	if (strcmp(name, "vkEnumerateDeviceExtensionProperties") == 0)
		return (PFN_vkVoidFunction)l_EnumerateDeviceExtensionProperties;
	PFN_vkVoidFunction h = hook(name);
	if (h)
		return h;
	return next_gipa ? next_gipa(inst, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
	if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->loaderLayerInterfaceVersion = 2;
	v->pfnGetInstanceProcAddr = locklayer_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = locklayer_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
