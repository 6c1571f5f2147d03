// vkprog.h: what the layer's test programs (lifecycle.c, drawn.c) share:
// a headless Vulkan 1.x program's instance and device, made as C
// programs make them, and debug-utils labels.
#ifndef VKPROG_H
#define VKPROG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#define CHECK(x)                                                              \
	do {                                                                  \
		VkResult r_ = (x);                                            \
		if (r_ != VK_SUCCESS) {                                       \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #x, r_); \
			exit(2);                                              \
		}                                                             \
	} while (0)

typedef struct {
	VkInstance inst;
	VkPhysicalDevice pd;
} instance;

typedef struct {
	VkDevice dev;
	VkQueue q;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkFence fence;
	PFN_vkCmdBeginDebugUtilsLabelEXT begin;
	PFN_vkCmdEndDebugUtilsLabelEXT end;
} device;

static inline instance make_instance(uint32_t api) {
	instance i = {0};
	const char *ext[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
	VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "lifecycle", .apiVersion = api};
	VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
				   .enabledExtensionCount = 1, .ppEnabledExtensionNames = ext};
	CHECK(vkCreateInstance(&ci, NULL, &i.inst));
	uint32_t n = 1;
	VkResult r = vkEnumeratePhysicalDevices(i.inst, &n, &i.pd);
	if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
		fprintf(stderr, "no physical device\n");
		exit(2);
	}
	return i;
}

static inline device make_device(instance *i) {
	device d = {0};
	uint32_t n = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(i->pd, &n, NULL);
	VkQueueFamilyProperties fam[16];
	if (n > 16)
		n = 16;
	vkGetPhysicalDeviceQueueFamilyProperties(i->pd, &n, fam);
	uint32_t f = 0;
	while (f < n && !(fam[f].queueFlags & VK_QUEUE_GRAPHICS_BIT))
		f++;
	float prio = 1;
	VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = f,
				       .queueCount = 1, .pQueuePriorities = &prio};
	VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
	CHECK(vkCreateDevice(i->pd, &ci, NULL, &d.dev));
	vkGetDeviceQueue(d.dev, f, 0, &d.q);
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = f,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
	CHECK(vkCreateCommandPool(d.dev, &pci, NULL, &d.pool));
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d.pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
	CHECK(vkAllocateCommandBuffers(d.dev, &ai, &d.cmd));
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	CHECK(vkCreateFence(d.dev, &fci, NULL, &d.fence));
	d.begin = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(d.dev, "vkCmdBeginDebugUtilsLabelEXT");
	d.end = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(d.dev, "vkCmdEndDebugUtilsLabelEXT");
	if (!d.begin || !d.end) {
		fprintf(stderr, "no debug utils labels\n");
		exit(2);
	}
	return d;
}

static inline void label(device *d, const char *name) {
	VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = name};
	d->begin(d->cmd, &l);
}

static inline double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline void destroy_device(device *d) {
	vkDeviceWaitIdle(d->dev);
	vkDestroyFence(d->dev, d->fence, NULL);
	vkFreeCommandBuffers(d->dev, d->pool, 1, &d->cmd);
	vkDestroyCommandPool(d->dev, d->pool, NULL);
	vkDestroyDevice(d->dev, NULL);
}

#endif
