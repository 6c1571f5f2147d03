// perfquery: which devices here offer VK_KHR_performance_query, and what a
// profiler would get from it: for each physical device, whether the
// extension is there, and for each queue family the counters the driver
// lists (name, category, unit, scope), and the passes one query of all
// of them takes. Built here and run on each machine:
//   gcc -O2 -o perfquery scripts/gpu/perfquery.c -lvulkan && ./perfquery
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

static const char *unit_name(VkPerformanceCounterUnitKHR u) {
	static const char *names[] = {"generic", "percentage", "nanoseconds", "bytes", "bytes/s", "kelvin",
				      "watts", "volts", "amps", "hertz", "cycles"};
	return u < sizeof names / sizeof *names ? names[u] : "?";
}

static const char *scope_name(VkPerformanceCounterScopeKHR s) {
	switch (s) {
	case VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR: return "command buffer";
	case VK_PERFORMANCE_COUNTER_SCOPE_RENDER_PASS_KHR: return "render pass";
	case VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR: return "command";
	default: return "?";
	}
}

int main(void) {
	VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
	const char *ext = VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME;
	VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
				   .enabledExtensionCount = 1, .ppEnabledExtensionNames = &ext};
	VkInstance inst;
	if (vkCreateInstance(&ci, NULL, &inst) != VK_SUCCESS) {
		fprintf(stderr, "perfquery: no Vulkan instance\n");
		return 1;
	}
	PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR enumerate =
		(PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR)vkGetInstanceProcAddr(
			inst, "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR");
	PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR passes =
		(PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR)vkGetInstanceProcAddr(
			inst, "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR");
	uint32_t n = 0;
	vkEnumeratePhysicalDevices(inst, &n, NULL);
	VkPhysicalDevice *pds = calloc(n, sizeof *pds);
	vkEnumeratePhysicalDevices(inst, &n, pds);
	for (uint32_t d = 0; d < n; d++) {
		VkPhysicalDeviceProperties props;
		vkGetPhysicalDeviceProperties(pds[d], &props);
		uint32_t ne = 0;
		vkEnumerateDeviceExtensionProperties(pds[d], NULL, &ne, NULL);
		VkExtensionProperties *es = calloc(ne, sizeof *es);
		vkEnumerateDeviceExtensionProperties(pds[d], NULL, &ne, es);
		int has = 0;
		for (uint32_t i = 0; i < ne; i++)
			has |= strcmp(es[i].extensionName, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) == 0;
		free(es);
		printf("device %u: %s (driver version %u.%u): VK_KHR_performance_query %s\n", d, props.deviceName,
		       VK_API_VERSION_MAJOR(props.driverVersion), VK_API_VERSION_MINOR(props.driverVersion), has ? "offered" : "not offered");
		if (!has || !enumerate)
			continue;
		uint32_t nf = 0;
		vkGetPhysicalDeviceQueueFamilyProperties(pds[d], &nf, NULL);
		for (uint32_t f = 0; f < nf; f++) {
			uint32_t nc = 0;
			if (enumerate(pds[d], f, &nc, NULL, NULL) != VK_SUCCESS || nc == 0) {
				printf("  family %u: no counters\n", f);
				continue;
			}
			VkPerformanceCounterKHR *cs = calloc(nc, sizeof *cs);
			VkPerformanceCounterDescriptionKHR *ds = calloc(nc, sizeof *ds);
			uint32_t *all = calloc(nc, sizeof *all);
			for (uint32_t i = 0; i < nc; i++) {
				cs[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_KHR;
				ds[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_DESCRIPTION_KHR;
				all[i] = i;
			}
			enumerate(pds[d], f, &nc, cs, ds);
			uint32_t np = 0;
			VkQueryPoolPerformanceCreateInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR,
								  .queueFamilyIndex = f, .counterIndexCount = nc, .pCounterIndices = all};
			if (passes)
				passes(pds[d], &pi, &np);
			printf("  family %u: %u counters, all of them in %u passes\n", f, nc, np);
			for (uint32_t i = 0; i < nc; i++)
				printf("    %s | %s | %s | %s\n", ds[i].name, ds[i].category, unit_name(cs[i].unit), scope_name(cs[i].scope));
			free(cs), free(ds), free(all);
		}
	}
	free(pds);
	vkDestroyInstance(inst, NULL);
	return 0;
}
