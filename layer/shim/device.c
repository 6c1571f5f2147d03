// Device creation: the layer asks for calibrated timestamps and host query
// reset where the physical device offers them and the program did not,
// so that every program gets the best clock its hardware has, and, with
// FRAMESCOPE_WORK=1 (framescope run -work), for pipeline statistics
// queries; then it makes the device's dispatch and tells the Go library.
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define MAX_EXTS 512

// offer lists what the physical device offers of what the layer wants.
typedef struct {
	int calibrated_khr, calibrated_ext, host_reset_ext;
	int host_reset_feature; // supported, as Features2 says
	int stats_feature;      // pipelineStatisticsQuery supported
	uint32_t api_version;   // the device's, capped by the instance's
} offer;

static int enabled(const VkDeviceCreateInfo *ci, const char *name) {
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(ci->ppEnabledExtensionNames[i], name) == 0)
			return 1;
	return 0;
}

static offer offered(fs_instance *inst, VkPhysicalDevice pd) {
	offer o = {0};
	uint32_t n = 0;
	if (inst->EnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) == VK_SUCCESS && n > 0) {
		VkExtensionProperties *e = calloc(n, sizeof *e);
		if (e && inst->EnumerateDeviceExtensionProperties(pd, NULL, &n, e) >= 0) {
			for (uint32_t i = 0; i < n; i++) {
				o.calibrated_khr |= strcmp(e[i].extensionName, "VK_KHR_calibrated_timestamps") == 0;
				o.calibrated_ext |= strcmp(e[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) == 0;
				o.host_reset_ext |= strcmp(e[i].extensionName, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME) == 0;
			}
		}
		free(e);
	}
	VkPhysicalDeviceProperties props;
	inst->GetPhysicalDeviceProperties(pd, &props);
	uint32_t api = inst->api_version ? inst->api_version : VK_API_VERSION_1_0;
	o.api_version = props.apiVersion < api ? props.apiVersion : api;
	if (inst->GetPhysicalDeviceFeatures) {
		VkPhysicalDeviceFeatures f = {0};
		inst->GetPhysicalDeviceFeatures(pd, &f);
		o.stats_feature = f.pipelineStatisticsQuery;
	}
	if (inst->GetPhysicalDeviceFeatures2) {
		VkPhysicalDeviceHostQueryResetFeatures hr = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES};
		VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &hr};
		if (o.api_version >= VK_API_VERSION_1_2 || o.host_reset_ext) {
			inst->GetPhysicalDeviceFeatures2(pd, &f);
			o.host_reset_feature = hr.hostQueryReset;
		}
	}
	return o;
}

// find returns the first struct of type t in a pNext chain.
static VkBaseOutStructure *find(const void *chain, VkStructureType t) {
	for (VkBaseOutStructure *s = (VkBaseOutStructure *)chain; s; s = s->pNext)
		if (s->sType == t)
			return s;
	return NULL;
}

// A device create info the layer changed, and how to undo what it changed
// in the program's own structs.
typedef struct {
	VkDeviceCreateInfo ci;
	const char *exts[MAX_EXTS];
	VkPhysicalDeviceHostQueryResetFeatures hr;
	VkPhysicalDeviceFeatures features; // the program's, with pipelineStatisticsQuery
	VkBool32 *flipped; // a program's hostQueryReset the layer set, to restore
	VkBool32 *flipped_stats; // likewise its pipelineStatisticsQuery
	uint32_t flags;    // FS_DEV_* the device will have
	int calibrated_added; // the layer enabled the calibrated-timestamps extension, not the program
} changed;

static void ask_host_reset(changed *c, const offer *o, const VkDeviceCreateInfo *ci) {
	if (!o->host_reset_feature)
		return;
	VkBaseOutStructure *v12 = find(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
	VkBaseOutStructure *own = find(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES);
	VkBool32 *field = v12 ? &((VkPhysicalDeviceVulkan12Features *)v12)->hostQueryReset
			      : own ? &((VkPhysicalDeviceHostQueryResetFeatures *)own)->hostQueryReset
				    : NULL;
	if (o->api_version < VK_API_VERSION_1_2) {
		// Only as the program enabled it: an extension the layer adds
		// is not one the loader hands out entry points of (on NVIDIA's
		// driver the profiler, which calls through the loader, found no
		// vkResetQueryPoolEXT), and recordings reset their queries in
		// their command buffers without it.
		if (enabled(ci, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME) && own && ((VkPhysicalDeviceHostQueryResetFeatures *)own)->hostQueryReset)
			c->flags |= FS_DEV_HOST_QUERY_RESET;
		return;
	}
	c->flags |= FS_DEV_HOST_QUERY_RESET;
	if (field) {
		if (!*field) {
			*field = VK_TRUE; // the program's struct: set back after the call
			c->flipped = field;
		}
		return;
	}
	c->hr = (VkPhysicalDeviceHostQueryResetFeatures){
	    .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
	    .pNext = (void *)c->ci.pNext,
	    .hostQueryReset = VK_TRUE,
	};
	c->ci.pNext = &c->hr;
}

static void ask_calibrated(changed *c, const offer *o, const VkDeviceCreateInfo *ci) {
	if (enabled(ci, "VK_KHR_calibrated_timestamps") || enabled(ci, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
		c->flags |= FS_DEV_CALIBRATED;
		return;
	}
	if (!(o->calibrated_khr || o->calibrated_ext) || c->ci.enabledExtensionCount >= MAX_EXTS)
		return;
	// The EXT name where the device offers it: a validation layer below
	// this one that predates the KHR name (Debian's 1.3.239) warns of it.
	c->exts[c->ci.enabledExtensionCount++] = o->calibrated_ext ? VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME : "VK_KHR_calibrated_timestamps";
	c->flags |= FS_DEV_CALIBRATED;
	c->calibrated_added = 1;
}

// work reports whether the run asked for each zone's work
// (FRAMESCOPE_WORK=1).
static int work(void) {
	static int on = -1;
	if (on < 0) {
		const char *e = getenv("FRAMESCOPE_WORK");
		on = e && strcmp(e, "1") == 0;
	}
	return on;
}

// ask_stats enables pipelineStatisticsQuery, with FRAMESCOPE_WORK=1, where
// the device supports it: in the program's VkPhysicalDeviceFeatures2 (set
// back after the call), else in a copy of its features, else in features
// of the layer's own.
static void ask_stats(changed *c, const offer *o, const VkDeviceCreateInfo *ci) {
	if (!work() || !o->stats_feature)
		return;
	c->flags |= FS_DEV_PIPELINE_STATS;
	VkBaseOutStructure *f2 = find(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
	if (f2) {
		VkBool32 *field = &((VkPhysicalDeviceFeatures2 *)f2)->features.pipelineStatisticsQuery;
		if (!*field) {
			*field = VK_TRUE;
			c->flipped_stats = field;
		}
		return;
	}
	if (ci->pEnabledFeatures)
		c->features = *ci->pEnabledFeatures;
	else
		memset(&c->features, 0, sizeof c->features);
	c->features.pipelineStatisticsQuery = VK_TRUE;
	c->ci.pEnabledFeatures = &c->features;
}

static void tell_go(fs_device *v, VkPhysicalDevice pd, const VkDeviceCreateInfo *ci, uint32_t flags) {
	if (!fs_go_loaded)
		return;
	uint32_t n = ci->queueCreateInfoCount, fam[256], cnt[256];
	if (n > 256)
		n = 256;
	for (uint32_t i = 0; i < n; i++) {
		fam[i] = ci->pQueueCreateInfos[i].queueFamilyIndex;
		cnt[i] = ci->pQueueCreateInfos[i].queueCount;
	}
	if (v->inst->debug_utils)
		flags |= FS_DEV_DEBUG_UTILS;
	if (v->inst->props2)
		flags |= FS_DEV_PROPS2;
	fs_go.device_created(v->inst->handle, pd, v->handle, (void *)v->gipa, (void *)v->gdpa, (void *)v->set_loader,
			     v->inst->api_version, flags, n, fam, cnt);
}

static void fill(fs_device *v, VkDevice d) {
#define GET(f) v->f = (PFN_vk##f)v->gdpa(d, "vk" #f)
	GET(DestroyDevice);
	GET(BeginCommandBuffer);
	GET(EndCommandBuffer);
	GET(CmdExecuteCommands);
	GET(CmdBeginRenderPass);
	GET(CmdEndRenderPass);
	GET(CmdBeginRenderPass2);
	if (!v->CmdBeginRenderPass2)
		v->CmdBeginRenderPass2 = (PFN_vkCmdBeginRenderPass2)v->gdpa(d, "vkCmdBeginRenderPass2KHR");
	GET(CmdEndRenderPass2);
	if (!v->CmdEndRenderPass2)
		v->CmdEndRenderPass2 = (PFN_vkCmdEndRenderPass2)v->gdpa(d, "vkCmdEndRenderPass2KHR");
	GET(CmdBeginRendering);
	if (!v->CmdBeginRendering)
		v->CmdBeginRendering = (PFN_vkCmdBeginRendering)v->gdpa(d, "vkCmdBeginRenderingKHR");
	GET(CmdEndRendering);
	if (!v->CmdEndRendering)
		v->CmdEndRendering = (PFN_vkCmdEndRendering)v->gdpa(d, "vkCmdEndRenderingKHR");
	GET(CmdBeginDebugUtilsLabelEXT);
	GET(CmdEndDebugUtilsLabelEXT);
	GET(CmdDebugMarkerBeginEXT);
	GET(CmdDebugMarkerEndEXT);
	GET(QueueSubmit);
	GET(QueueSubmit2);
	if (!v->QueueSubmit2)
		v->QueueSubmit2 = (PFN_vkQueueSubmit2)v->gdpa(d, "vkQueueSubmit2KHR");
	GET(QueuePresentKHR);
	GET(AcquireNextImageKHR);
	GET(WaitForFences);
	GET(WaitSemaphores);
	if (!v->WaitSemaphores)
		v->WaitSemaphores = (PFN_vkWaitSemaphores)v->gdpa(d, "vkWaitSemaphoresKHR");
	GET(QueueWaitIdle);
	GET(DeviceWaitIdle);
	GET(GetDeviceQueue);
	GET(GetDeviceQueue2);
	GET(CreateCommandPool);
	GET(CreateQueryPool);
	GET(DestroyQueryPool);
	GET(CmdBeginQuery);
	GET(CmdEndQuery);
	GET(CmdBeginQueryIndexedEXT);
	GET(CmdEndQueryIndexedEXT);
	GET(AllocateCommandBuffers);
	GET(FreeCommandBuffers);
	GET(DestroyCommandPool);
	GET(ResetCommandPool);
	GET(CmdDraw);
	GET(CmdDrawIndexed);
	GET(CmdDrawIndirect);
	GET(CmdDrawIndexedIndirect);
	GET(CmdDrawIndirectCount);
	if (!v->CmdDrawIndirectCount)
		v->CmdDrawIndirectCount = (PFN_vkCmdDrawIndirectCount)v->gdpa(d, "vkCmdDrawIndirectCountKHR");
	GET(CmdDrawIndexedIndirectCount);
	if (!v->CmdDrawIndexedIndirectCount)
		v->CmdDrawIndexedIndirectCount = (PFN_vkCmdDrawIndexedIndirectCount)v->gdpa(d, "vkCmdDrawIndexedIndirectCountKHR");
	GET(CmdDispatch);
	GET(CmdDispatchIndirect);
	GET(CmdDispatchBase);
	if (!v->CmdDispatchBase)
		v->CmdDispatchBase = (PFN_vkCmdDispatchBase)v->gdpa(d, "vkCmdDispatchBaseKHR");
	GET(CmdDrawMultiEXT);
	GET(CmdDrawMultiIndexedEXT);
	GET(CmdDrawIndirectByteCountEXT);
	GET(CmdDrawMeshTasksEXT);
	GET(CmdDrawMeshTasksIndirectEXT);
	GET(CmdDrawMeshTasksIndirectCountEXT);
#undef GET
}

// own_request sets c's create info to the program's, less what the layer
// offers itself and the device below does not (VK_EXT_frame_boundary),
// until fs_boundary_device_done.
static void own_request(changed *c, const VkDeviceCreateInfo *ci, fs_instance *inst, VkPhysicalDevice pd, int *boundary,
			fs_boundary_undo *undo) {
	c->ci = *ci;
	memcpy(c->exts, ci->ppEnabledExtensionNames, ci->enabledExtensionCount * sizeof(char *));
	c->ci.ppEnabledExtensionNames = c->exts;
	fs_boundary_device_ask(inst, pd, &c->ci, c->exts, boundary, undo);
}

// loader_data returns the loader's vkSetDeviceLoaderData from the
// device's create info, or NULL.
static PFN_vkSetDeviceLoaderData loader_data(const VkDeviceCreateInfo *ci) {
	for (const VkLayerDeviceCreateInfo *l = ci->pNext; l; l = l->pNext)
		if (l->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && l->function == VK_LOADER_DATA_CALLBACK)
			return l->u.pfnSetDeviceLoaderData;
	return NULL;
}

VkResult fs_create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci, const VkAllocationCallbacks *alloc, VkDevice *out) {
	VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)ci->pNext;
	while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
		link = (VkLayerDeviceCreateInfo *)link->pNext;
	fs_instance *inst = fs_instance_of(pd);
	if (!link || !inst)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	VkLayerDeviceLink *below = link->u.pLayerInfo->pNext;
	link->u.pLayerInfo = below;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(inst->handle, "vkCreateDevice");

	changed *c = calloc(1, sizeof *c);
	VkResult r = VK_ERROR_INITIALIZATION_FAILED;
	int boundary = 0;
	fs_boundary_undo undo = {0};
	uint32_t flags = 0;
	int hide = 0;
	if (c && ci->enabledExtensionCount < MAX_EXTS) {
		offer o = offered(inst, pd);
		own_request(c, ci, inst, pd, &boundary, &undo);
		ask_host_reset(c, &o, &c->ci);
		ask_calibrated(c, &o, &c->ci);
		ask_stats(c, &o, &c->ci);
		r = create(pd, &c->ci, alloc, out);
		fs_boundary_device_done(&undo);
		if (c->flipped)
			*c->flipped = VK_FALSE;
		if (c->flipped_stats)
			*c->flipped_stats = VK_FALSE;
		flags = r == VK_SUCCESS ? c->flags : 0;
		hide = r == VK_SUCCESS && c->calibrated_added;
		if (r != VK_SUCCESS) { // what the layer asked for failed: the program's own request
			link->u.pLayerInfo = below; // the layers below moved it along
			own_request(c, ci, inst, pd, &boundary, &undo);
			r = create(pd, &c->ci, alloc, out);
			fs_boundary_device_done(&undo);
		}
	} else {
		r = create(pd, ci, alloc, out); // no room to change it: as the program asked
	}
	free(c);
	if (r != VK_SUCCESS)
		return r;
	fs_device *v = calloc(1, sizeof *v);
	if (!v)
		return r;
	v->key = fs_key(*out);
	v->handle = *out;
	v->inst = inst;
	v->gdpa = gdpa;
	v->gipa = (PFN_vkGetInstanceProcAddr)fs_profiler_gipa;
	v->set_loader = loader_data(ci);
	v->frame_boundary = boundary != 0;
	v->frame_boundary_strip = undo.strip;
	v->hide_calibrated = hide;
	v->work = (flags & FS_DEV_PIPELINE_STATS) != 0;
	fill(v, *out);
	fs_add_device(v);
	tell_go(v, pd, ci, flags);
	return r;
}
