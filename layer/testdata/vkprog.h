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

// make_device_with makes the device of make_device with extensions
// exts (n of them) and next as its create info's chain.
static inline device make_device_with(instance *i, const char *const *exts, uint32_t nexts, const void *next) {
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
	VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = next, .queueCreateInfoCount = 1,
				 .pQueueCreateInfos = &qci, .enabledExtensionCount = nexts, .ppEnabledExtensionNames = exts};
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

// make_device makes a device of one queue of the first graphics family,
// a command pool, a command buffer and a fence, with debug labels.
static inline device make_device(instance *i) { return make_device_with(i, NULL, 0, NULL); }

static inline void label(device *d, const char *name) {
	VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = name};
	d->begin(d->cmd, &l);
}

// submit_wait submits n command buffers in one submission and waits for
// them (the device's fence, reset after).
static inline void submit_wait(device *d, const VkCommandBuffer *cmds, uint32_t n) {
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cmds};
	CHECK(vkQueueSubmit(d->q, 1, &si, d->fence));
	CHECK(vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX));
	CHECK(vkResetFences(d->dev, 1, &d->fence));
}

static inline double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// env_or is $name as a number, or def where it is unset or empty.
static inline double env_or(const char *name, double def) {
	const char *v = getenv(name);
	return v && *v ? atof(v) : def;
}

// spin keeps the CPU busy for ms milliseconds.
static inline void spin(double ms) {
	double until = now_ns() + ms * 1e6;
	volatile uint64_t x = 0;
	while (now_ns() < until)
		x++;
}

static inline void destroy_device(device *d) {
	vkDeviceWaitIdle(d->dev);
	vkDestroyFence(d->dev, d->fence, NULL);
	vkFreeCommandBuffers(d->dev, d->pool, 1, &d->cmd);
	vkDestroyCommandPool(d->dev, d->pool, NULL);
	vkDestroyDevice(d->dev, NULL);
}

// memory_type is the first of the device's memory types among bits with
// every property in want, or the count of its memory types if none has.
static inline uint32_t memory_type(instance *i, uint32_t bits, VkMemoryPropertyFlags want) {
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(i->pd, &mp);
	uint32_t t = 0;
	while (t < mp.memoryTypeCount && !((bits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & want) == want))
		t++;
	return t;
}

// buffer makes a buffer of size bytes that transfers write, bound to
// memory the host can read, coherent (*host set), or, if none (or with
// $VKPROG_DEVICE_LOCAL=1), the device's own, or the first it can live in.
static inline VkBuffer buffer(instance *i, device *d, VkDeviceSize size, VkDeviceMemory *mem, int *host) {
	VkBuffer b;
	VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
	CHECK(vkCreateBuffer(d->dev, &bi, NULL, &b));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(d->dev, b, &req);
	// $VKPROG_DEVICE_LOCAL=1: the device's own memory, which the host does
	// not read (on a GPU, fills at its speed, not the bus's).
	const char *local = getenv("VKPROG_DEVICE_LOCAL");
	int want_local = local && *local == '1';
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(i->pd, &mp);
	uint32_t t = mp.memoryTypeCount;
	if (!want_local)
		t = memory_type(i, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	*host = t < mp.memoryTypeCount;
	if (!*host)
		t = memory_type(i, req.memoryTypeBits, want_local ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : 0);
	if (t == mp.memoryTypeCount)
		t = memory_type(i, req.memoryTypeBits, 0);
	VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = t};
	CHECK(vkAllocateMemory(d->dev, &ai, NULL, mem));
	CHECK(vkBindBufferMemory(d->dev, b, *mem, 0));
	return b;
}

// target is a render pass of one RGBA8 color attachment, cleared,
// and a framebuffer of an image of size x size for it.
typedef struct {
	VkRenderPass rp;
	VkFramebuffer fb;
	VkImage img;
	VkImageView view;
	VkDeviceMemory mem;
} target;

static inline target make_target(instance *i, device *d, uint32_t size) {
	target t;
	VkImageCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, .imageType = VK_IMAGE_TYPE_2D,
				.format = VK_FORMAT_R8G8B8A8_UNORM, .extent = {size, size, 1}, .mipLevels = 1, .arrayLayers = 1,
				.samples = VK_SAMPLE_COUNT_1_BIT, .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT};
	CHECK(vkCreateImage(d->dev, &ii, NULL, &t.img));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(d->dev, t.img, &req);
	VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
				   .memoryTypeIndex = memory_type(i, req.memoryTypeBits, 0)};
	CHECK(vkAllocateMemory(d->dev, &ai, NULL, &t.mem));
	CHECK(vkBindImageMemory(d->dev, t.img, t.mem, 0));
	VkImageViewCreateInfo vi = {.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, .image = t.img, .viewType = VK_IMAGE_VIEW_TYPE_2D,
				    .format = ii.format, .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
	CHECK(vkCreateImageView(d->dev, &vi, NULL, &t.view));
	VkAttachmentDescription att = {.format = ii.format, .samples = VK_SAMPLE_COUNT_1_BIT, .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
				       .storeOp = VK_ATTACHMENT_STORE_OP_STORE, .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
				       .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE, .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
				       .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
	VkAttachmentReference ref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
	VkSubpassDescription sub = {.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS, .colorAttachmentCount = 1, .pColorAttachments = &ref};
	VkSubpassDependency dep = {.srcSubpass = VK_SUBPASS_EXTERNAL, .dstSubpass = 0,
				   .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
				   .dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
				   .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT};
	VkRenderPassCreateInfo rpi = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, .attachmentCount = 1, .pAttachments = &att,
				      .subpassCount = 1, .pSubpasses = &sub, .dependencyCount = 1, .pDependencies = &dep};
	CHECK(vkCreateRenderPass(d->dev, &rpi, NULL, &t.rp));
	VkFramebufferCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, .renderPass = t.rp, .attachmentCount = 1,
				      .pAttachments = &t.view, .width = size, .height = size, .layers = 1};
	CHECK(vkCreateFramebuffer(d->dev, &fi, NULL, &t.fb));
	return t;
}

static inline void destroy_target(device *d, target *t) {
	vkDestroyFramebuffer(d->dev, t->fb, NULL);
	vkDestroyRenderPass(d->dev, t->rp, NULL);
	vkDestroyImageView(d->dev, t->view, NULL);
	vkDestroyImage(d->dev, t->img, NULL);
	vkFreeMemory(d->dev, t->mem, NULL);
}

#endif
