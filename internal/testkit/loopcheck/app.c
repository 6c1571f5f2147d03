#include "app.h"
#include "app_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- Validation messages ----

static pthread_mutex_t msg_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t msg_count;
static char msg_last[2048];

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
	VkDebugUtilsMessageTypeFlagsEXT types, const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
	(void)types;
	(void)user;
	if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))) {
		return VK_FALSE;
	}
	// The loader's own word (a layer enabled by the environment, as a
	// profiler outside the program is) is not the validation layer's.
	if (data && data->pMessageIdName && strcmp(data->pMessageIdName, "Loader Message") == 0) {
		return VK_FALSE;
	}
	pthread_mutex_lock(&msg_mu);
	msg_count++;
	snprintf(msg_last, sizeof msg_last, "%s", data && data->pMessage ? data->pMessage : "(no message)");
	pthread_mutex_unlock(&msg_mu);
	return VK_FALSE;
}

// NVIDIA's driver does not stand being unloaded and loaded again many
// times in one process: the loader unloads it with the last instance. One
// bare instance kept for the life of the process keeps it loaded.
int lc_pin(void) {
	static VkInstance pin;
	if (pin) return 0;
	VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	ai.apiVersion = VK_API_VERSION_1_2;
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pApplicationInfo = &ai;
	return (int)vkCreateInstance(&ci, NULL, &pin);
}

uint64_t lc_messages(char *last, size_t len) {
	pthread_mutex_lock(&msg_mu);
	uint64_t n = msg_count;
	if (last && len) {
		snprintf(last, len, "%s", msg_last);
	}
	pthread_mutex_unlock(&msg_mu);
	return n;
}

static void messenger_info(VkDebugUtilsMessengerCreateInfoEXT *ci) {
	memset(ci, 0, sizeof *ci);
	ci->sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
	ci->messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	ci->messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
	ci->pfnUserCallback = on_message;
}

// ---- Set-up ----

int lc_fail(char *err, size_t len, const char *what, VkResult r) {
	snprintf(err, len, "%s: VkResult %d", what, (int)r);
	return r == VK_SUCCESS ? -1 : (int)r;
}

static int has_instance_ext(const char *name) {
	uint32_t n = 0;
	vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
	VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
	vkEnumerateInstanceExtensionProperties(NULL, &n, p);
	int found = 0;
	for (uint32_t i = 0; i < n; i++) {
		found |= strcmp(p[i].extensionName, name) == 0;
	}
	free(p);
	return found;
}

static int has_layer(const char *name) {
	uint32_t n = 0;
	vkEnumerateInstanceLayerProperties(&n, NULL);
	VkLayerProperties *p = calloc(n ? n : 1, sizeof *p);
	vkEnumerateInstanceLayerProperties(&n, p);
	int found = 0;
	for (uint32_t i = 0; i < n; i++) {
		found |= strcmp(p[i].layerName, name) == 0;
	}
	free(p);
	return found;
}

const char *lc_device_ext(VkPhysicalDevice pd, const char *a, const char *b) {
	uint32_t n = 0;
	vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
	VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
	vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p);
	const char *found = NULL;
	for (uint32_t i = 0; i < n && !found; i++) {
		if (strcmp(p[i].extensionName, a) == 0) found = a;
	}
	for (uint32_t i = 0; i < n && !found && b; i++) {
		if (strcmp(p[i].extensionName, b) == 0) found = b;
	}
	free(p);
	return found;
}

int lc_create(const lc_config *cfg, lc_app **out, char *err, size_t errlen) {
	lc_app *a = calloc(1, sizeof *a);
	a->cfg = *cfg;
	if (cfg->count_words) {
		a->count_spirv = malloc(cfg->count_words * 4);
		memcpy(a->count_spirv, cfg->count_spirv, cfg->count_words * 4);
		a->cfg.count_spirv = a->count_spirv;
	}
	const char *layers[1] = {"VK_LAYER_KHRONOS_validation"};
	const char *exts[2];
	uint32_t nexts = 0;
	a->debug_utils = has_instance_ext(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
	if (a->debug_utils) exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	int validation = cfg->validation && has_layer(layers[0]);
	if (cfg->validation && !validation) {
		free(a);
		snprintf(err, errlen, "the validation layer %s is not installed", layers[0]);
		return -1;
	}
	if (validation) exts[nexts++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;

	VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	ai.pApplicationName = "loopcheck";
	ai.apiVersion = cfg->api10 ? VK_API_VERSION_1_0 : VK_API_VERSION_1_2;
	VkValidationFeatureEnableEXT enables[1] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
	VkValidationFeaturesEXT vf = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
	vf.enabledValidationFeatureCount = 1;
	vf.pEnabledValidationFeatures = enables;
	VkDebugUtilsMessengerCreateInfoEXT mi;
	messenger_info(&mi);
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pApplicationInfo = &ai;
	ci.enabledExtensionCount = nexts;
	ci.ppEnabledExtensionNames = exts;
	if (validation) {
		ci.enabledLayerCount = 1;
		ci.ppEnabledLayerNames = layers;
		vf.pNext = a->debug_utils ? &mi : NULL;
		ci.pNext = &vf;
	}
	VkResult r = vkCreateInstance(&ci, NULL, &a->instance);
	if (r != VK_SUCCESS) {
		free(a);
		return lc_fail(err, errlen, "vkCreateInstance", r);
	}
	if (a->debug_utils) {
		PFN_vkCreateDebugUtilsMessengerEXT create =
			(PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkCreateDebugUtilsMessengerEXT");
		a->destroy_messenger =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkDestroyDebugUtilsMessengerEXT");
		if (create) create(a->instance, &mi, NULL, &a->messenger);
	}

	uint32_t n = 0;
	vkEnumeratePhysicalDevices(a->instance, &n, NULL);
	VkPhysicalDevice pds[16];
	if (n > 16) n = 16;
	vkEnumeratePhysicalDevices(a->instance, &n, pds);
	for (uint32_t i = 0; i < n && !a->physical; i++) {
		VkPhysicalDeviceProperties p;
		vkGetPhysicalDeviceProperties(pds[i], &p);
		int gpu = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
		if (cfg->device && cfg->device[0] ? strstr(p.deviceName, cfg->device) != NULL : gpu) {
			a->physical = pds[i];
		}
	}
	if (!a->physical && n > 0 && !(cfg->device && cfg->device[0])) a->physical = pds[0];
	if (!a->physical) {
		lc_destroy(a);
		snprintf(err, errlen, "no Vulkan device%s%s", cfg->device ? " named like " : "", cfg->device ? cfg->device : "");
		return -1;
	}
	VkPhysicalDeviceProperties p;
	vkGetPhysicalDeviceProperties(a->physical, &p);
	snprintf(a->name, sizeof a->name, "%s", p.deviceName);
	int rc = lc_create_device(a, err, errlen);
	if (rc != 0) {
		lc_destroy(a);
		return rc;
	}
	*out = a;
	return 0;
}

int lc_create_device(lc_app *a, char *err, size_t errlen) {
	uint32_t nf = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &nf, NULL);
	VkQueueFamilyProperties fams[32];
	if (nf > 32) nf = 32;
	vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &nf, fams);
	VkDeviceQueueCreateInfo qci[32];
	float prio[64];
	for (int i = 0; i < 64; i++) prio[i] = 1;
	uint32_t nq = 0;
	for (uint32_t f = 0; f < nf; f++) {
		if (fams[f].timestampValidBits == 0 || fams[f].queueCount == 0) continue;
		uint32_t count = fams[f].queueCount;
		if (a->cfg.queues > 0 && count > (uint32_t)a->cfg.queues) count = (uint32_t)a->cfg.queues;
		memset(&qci[nq], 0, sizeof qci[nq]);
		qci[nq].sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		qci[nq].queueFamilyIndex = f;
		qci[nq].queueCount = count;
		qci[nq].pQueuePriorities = prio;
		nq++;
	}
	if (nq == 0) {
		snprintf(err, errlen, "%s has no queue family with timestamps", a->name);
		return -1;
	}
	const char *exts[4];
	uint32_t nexts = 0;
	a->calibrated = 0;
	if (a->cfg.calibrated && !a->cfg.api10) {
		// With the validation layer, the EXT name, which the layer knows
		// (1.3.239 warns of the KHR one); without it, KHR first.
		const char *cal = a->cfg.validation
			? lc_device_ext(a->physical, "VK_EXT_calibrated_timestamps", "VK_KHR_calibrated_timestamps")
			: lc_device_ext(a->physical, "VK_KHR_calibrated_timestamps", "VK_EXT_calibrated_timestamps");
		if (cal) {
			exts[nexts++] = cal;
			a->calibrated = 1;
		}
	}
	VkPhysicalDeviceHostQueryResetFeatures hqr = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES};
	VkPhysicalDeviceTimelineSemaphoreFeatures tl = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
	VkPhysicalDeviceSynchronization2FeaturesKHR s2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES_KHR};
	VkPhysicalDeviceDynamicRenderingFeaturesKHR dr = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES_KHR};
	VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	f2.pNext = &hqr;
	hqr.pNext = &tl;
	tl.pNext = &s2;
	s2.pNext = &dr;
	if (!a->cfg.api10) vkGetPhysicalDeviceFeatures2(a->physical, &f2);
	a->host_reset = a->cfg.host_reset && hqr.hostQueryReset;
	hqr.hostQueryReset = a->host_reset ? VK_TRUE : VK_FALSE;
	// Timeline semaphores are Vulkan 1.2's, the other two extensions.
	a->timeline = a->cfg.timeline && !a->cfg.api10 && tl.timelineSemaphore;
	a->sync2 = a->cfg.sync2 && !a->cfg.api10 && s2.synchronization2 &&
		lc_device_ext(a->physical, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME, NULL);
	a->rendering = a->cfg.rendering && !a->cfg.api10 && dr.dynamicRendering &&
		lc_device_ext(a->physical, VK_KHR_DYNAMIC_RENDERING_EXTENSION_NAME, NULL);
	if (a->sync2) exts[nexts++] = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
	if (a->rendering) {
		// VK_KHR_dynamic_rendering needs VK_KHR_depth_stencil_resolve
		// (core in 1.2) and VK_KHR_get_physical_device_properties2 (1.1).
		exts[nexts++] = VK_KHR_DYNAMIC_RENDERING_EXTENSION_NAME;
	}
	tl.timelineSemaphore = a->timeline ? VK_TRUE : VK_FALSE;
	s2.synchronization2 = a->sync2 ? VK_TRUE : VK_FALSE;
	dr.dynamicRendering = a->rendering ? VK_TRUE : VK_FALSE;
	dr.pNext = NULL;
	VkPhysicalDeviceFeatures have, want;
	vkGetPhysicalDeviceFeatures(a->physical, &have);
	memset(&want, 0, sizeof want);
	a->pipeline_stats = a->cfg.pipeline_stats && have.pipelineStatisticsQuery && a->cfg.count_words;
	want.pipelineStatisticsQuery = a->pipeline_stats ? VK_TRUE : VK_FALSE;
	VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
	dci.pNext = a->cfg.api10 ? NULL : &hqr;
	dci.pEnabledFeatures = &want;
	dci.queueCreateInfoCount = nq;
	dci.pQueueCreateInfos = qci;
	dci.enabledExtensionCount = nexts;
	dci.ppEnabledExtensionNames = exts;
	VkResult r = vkCreateDevice(a->physical, &dci, NULL, &a->device);
	if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkCreateDevice", r);
	a->submit2 = a->sync2 ? (PFN_vkQueueSubmit2KHR)vkGetDeviceProcAddr(a->device, "vkQueueSubmit2KHR") : NULL;
	a->barrier2 = a->sync2 ? (PFN_vkCmdPipelineBarrier2KHR)vkGetDeviceProcAddr(a->device, "vkCmdPipelineBarrier2KHR") : NULL;
	a->begin_rendering = a->rendering ? (PFN_vkCmdBeginRenderingKHR)vkGetDeviceProcAddr(a->device, "vkCmdBeginRenderingKHR") : NULL;
	a->end_rendering = a->rendering ? (PFN_vkCmdEndRenderingKHR)vkGetDeviceProcAddr(a->device, "vkCmdEndRenderingKHR") : NULL;
	a->sync2 = a->sync2 && a->submit2 && a->barrier2;
	a->rendering = a->rendering && a->begin_rendering && a->end_rendering;
	a->nqueues = 0;
	for (uint32_t i = 0; i < nq; i++) {
		for (uint32_t k = 0; k < qci[i].queueCount && a->nqueues < 64; k++) {
			lc_queue *q = &a->queues[a->nqueues++];
			q->family = qci[i].queueFamilyIndex;
			q->index = k;
			q->flags = fams[q->family].queueFlags;
			q->valid_bits = fams[q->family].timestampValidBits;
			vkGetDeviceQueue(a->device, q->family, k, &q->queue);
		}
	}
	VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bi.size = LC_WORK;
	// A source too: a program of the application's (bare) reads it back.
	bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
	r = vkCreateBuffer(a->device, &bi, NULL, &a->work);
	if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkCreateBuffer", r);
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(a->device, a->work, &req);
	VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = (uint32_t)__builtin_ctz(req.memoryTypeBits);
	r = vkAllocateMemory(a->device, &mai, NULL, &a->memory);
	if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkAllocateMemory", r);
	r = vkBindBufferMemory(a->device, a->work, a->memory, 0);
	if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkBindBufferMemory", r);
	if (a->pipeline_stats) {
		VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
		smi.codeSize = a->cfg.count_words * 4;
		smi.pCode = a->cfg.count_spirv;
		VkShaderModule m;
		r = vkCreateShaderModule(a->device, &smi, NULL, &m);
		if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkCreateShaderModule", r);
		VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
		r = vkCreatePipelineLayout(a->device, &pli, NULL, &a->count_layout);
		if (r != VK_SUCCESS) {
			vkDestroyShaderModule(a->device, m, NULL);
			return lc_fail(err, errlen, "vkCreatePipelineLayout", r);
		}
		VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
		cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
		cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
		cpi.stage.module = m;
		cpi.stage.pName = "main";
		cpi.layout = a->count_layout;
		cpi.basePipelineIndex = -1;
		r = vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &cpi, NULL, &a->count);
		vkDestroyShaderModule(a->device, m, NULL);
		if (r != VK_SUCCESS) return lc_fail(err, errlen, "vkCreateComputePipelines", r);
	}
	return 0;
}

int lc_destroy_device(lc_app *a) {
	if (!a->device) return 0;
	VkResult r = vkDeviceWaitIdle(a->device);
	if (a->count) vkDestroyPipeline(a->device, a->count, NULL);
	if (a->count_layout) vkDestroyPipelineLayout(a->device, a->count_layout, NULL);
	a->count = VK_NULL_HANDLE;
	a->count_layout = VK_NULL_HANDLE;
	vkDestroyBuffer(a->device, a->work, NULL);
	vkFreeMemory(a->device, a->memory, NULL);
	vkDestroyDevice(a->device, NULL);
	a->device = NULL;
	a->work = VK_NULL_HANDLE;
	a->memory = VK_NULL_HANDLE;
	a->nqueues = 0;
	return (int)r;
}

void lc_destroy(lc_app *a) {
	if (!a) return;
	lc_destroy_device(a);
	if (a->messenger && a->destroy_messenger) a->destroy_messenger(a->instance, a->messenger, NULL);
	if (a->instance) vkDestroyInstance(a->instance, NULL);
	free(a->count_spirv);
	free(a);
}

VkInstance lc_instance(lc_app *a) { return a->instance; }
VkPhysicalDevice lc_physical(lc_app *a) { return a->physical; }
VkDevice lc_device(lc_app *a) { return a->device; }
const char *lc_device_name(lc_app *a) { return a->name; }
int lc_queue_count(lc_app *a) { return a->nqueues; }
lc_queue lc_queue_at(lc_app *a, int i) { return a->queues[i]; }
int lc_has_host_reset(lc_app *a) { return a->host_reset; }
uint32_t lc_api_version(lc_app *a) { return a->cfg.api10 ? VK_API_VERSION_1_0 : VK_API_VERSION_1_2; }
int lc_has_calibrated(lc_app *a) { return a->calibrated; }
int lc_has_debug_utils(lc_app *a) { return a->debug_utils; }
int lc_has_pipeline_stats(lc_app *a) { return a->pipeline_stats; }
int lc_has_timeline(lc_app *a) { return a->timeline; }
int lc_has_sync2(lc_app *a) { return a->sync2; }
int lc_has_rendering(lc_app *a) { return a->rendering; }

void lc_dispatch(lc_app *a, VkCommandBuffer c, uint32_t groups) {
	vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, a->count);
	vkCmdDispatch(c, groups, 1, 1);
}
uint64_t lc_work_size(void) { return LC_WORK; }

// ---- Recording and submitting ----

VkCommandPool lc_create_pool(lc_app *a, uint32_t family) {
	VkCommandPoolCreateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	ci.queueFamilyIndex = family;
	VkCommandPool p = VK_NULL_HANDLE;
	vkCreateCommandPool(a->device, &ci, NULL, &p);
	return p;
}

void lc_destroy_pool(lc_app *a, VkCommandPool p) { vkDestroyCommandPool(a->device, p, NULL); }
int lc_reset_pool(lc_app *a, VkCommandPool p) { return (int)vkResetCommandPool(a->device, p, 0); }

VkCommandBuffer lc_alloc_cmd(lc_app *a, VkCommandPool p, int secondary) {
	VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
	ai.commandPool = p;
	ai.level = secondary ? VK_COMMAND_BUFFER_LEVEL_SECONDARY : VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 1;
	VkCommandBuffer c = NULL;
	vkAllocateCommandBuffers(a->device, &ai, &c);
	return c;
}

int lc_begin_cmd(VkCommandBuffer c, int secondary) {
	VkCommandBufferInheritanceInfo ii = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	if (secondary) bi.pInheritanceInfo = &ii;
	return (int)vkBeginCommandBuffer(c, &bi);
}

int lc_begin_reusable(VkCommandBuffer c) {
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	return (int)vkBeginCommandBuffer(c, &bi);
}

int lc_begin_reusable_secondary(VkCommandBuffer c) {
	VkCommandBufferInheritanceInfo ii = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.pInheritanceInfo = &ii;
	return (int)vkBeginCommandBuffer(c, &bi);
}

int lc_begin_simultaneous(VkCommandBuffer c, int secondary) {
	VkCommandBufferInheritanceInfo ii = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
	if (secondary) bi.pInheritanceInfo = &ii;
	return (int)vkBeginCommandBuffer(c, &bi);
}

int lc_end_cmd(VkCommandBuffer c) { return (int)vkEndCommandBuffer(c); }

void lc_execute(VkCommandBuffer primary, uint32_t n, VkCommandBuffer s0, VkCommandBuffer s1, VkCommandBuffer s2, VkCommandBuffer s3) {
	VkCommandBuffer s[4] = {s0, s1, s2, s3};
	if (n > 4) n = 4;
	if (n) vkCmdExecuteCommands(primary, n, s);
}

void lc_fill(lc_app *a, VkCommandBuffer c, uint64_t offset, uint32_t value, int barrier) {
	if (barrier && a->sync2 && a->use_sync2) {
		VkMemoryBarrier2KHR mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2_KHR};
		mb.srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT_KHR;
		mb.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT_KHR;
		mb.dstStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT_KHR;
		mb.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT_KHR;
		VkDependencyInfoKHR di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO_KHR};
		di.memoryBarrierCount = 1;
		di.pMemoryBarriers = &mb;
		a->barrier2(c, &di);
	} else if (barrier) {
		VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
		mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
		mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
		vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	}
	vkCmdFillBuffer(c, a->work, offset % LC_WORK, 4, value);
}

VkFence lc_create_fence(lc_app *a) {
	VkFenceCreateInfo ci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	VkFence f = VK_NULL_HANDLE;
	vkCreateFence(a->device, &ci, NULL, &f);
	return f;
}

void lc_destroy_fence(lc_app *a, VkFence f) { vkDestroyFence(a->device, f, NULL); }

VkSemaphore lc_create_semaphore(lc_app *a) {
	VkSemaphoreCreateInfo ci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
	VkSemaphore s = VK_NULL_HANDLE;
	vkCreateSemaphore(a->device, &ci, NULL, &s);
	return s;
}

void lc_destroy_semaphore(lc_app *a, VkSemaphore s) { vkDestroySemaphore(a->device, s, NULL); }

int lc_wait_fence(lc_app *a, VkFence f, uint64_t timeout) {
	VkResult r = vkWaitForFences(a->device, 1, &f, VK_TRUE, timeout);
	if (r == VK_SUCCESS) r = vkResetFences(a->device, 1, &f);
	return (int)r;
}

int lc_wait_idle(lc_app *a) { return (int)vkDeviceWaitIdle(a->device); }
