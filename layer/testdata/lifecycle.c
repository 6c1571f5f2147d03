// A headless Vulkan program in C, as the layer's tests run it: it records
// nested debug-utils label regions into a command buffer, submits it and
// waits, and makes and destroys its objects in the ways programs do.
//
//   lifecycle recreate N   instance and device made, used and destroyed, twice
//   lifecycle two N        two devices alive at once, used in turn
//   lifecycle nodestroy N  exits without destroying anything
//   lifecycle v10 N        a Vulkan 1.0 instance (labels need debug utils only)
//   lifecycle cost N K     N submissions of K labelled regions each: prints
//                          the CPU time of recording one region (begin and
//                          end), the median over submissions
//   lifecycle rawcost N K  the same with two raw timestamps a region
//
// Each use submits the command buffer N times; each submission carries 3
// labelled regions: "outer" holding "inner a" and "inner b".
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

static instance make_instance(uint32_t api) {
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

static device make_device(instance *i) {
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

static void label(device *d, const char *name) {
	VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = name};
	d->begin(d->cmd, &l);
}

// use records the regions anew and submits them n times, each waited for.
static void use(device *d, int n) {
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		label(d, "outer");
		label(d, "inner a");
		d->end(d->cmd);
		label(d, "inner b");
		d->end(d->cmd);
		d->end(d->cmd);
		CHECK(vkEndCommandBuffer(d->cmd));
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->cmd};
		CHECK(vkQueueSubmit(d->q, 1, &si, d->fence));
		CHECK(vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(d->dev, 1, &d->fence));
	}
}

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// cost records k regions a submission, n submissions, and prints the
// median CPU time of recording one region; with raw set, each region is
// two timestamps into a query pool of its own instead of a label (the
// floor a profiler's zone is measured against).
static void cost(device *d, int n, int k, int raw) {
	double *per = calloc(n, sizeof *per);
	VkQueryPool qp = VK_NULL_HANDLE;
	if (raw) {
		VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
					    .queryCount = 2 * k};
		CHECK(vkCreateQueryPool(d->dev, &qi, NULL, &qp));
	}
	for (int i = 0; i < n; i++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		if (raw)
			vkCmdResetQueryPool(d->cmd, qp, 0, 2 * k);
		double t0 = now_ns();
		for (int j = 0; j < k; j++) {
			if (raw) {
				vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 2 * j);
				vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2 * j + 1);
				continue;
			}
			label(d, "region");
			d->end(d->cmd);
		}
		per[i] = (now_ns() - t0) / k;
		CHECK(vkEndCommandBuffer(d->cmd));
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->cmd};
		CHECK(vkQueueSubmit(d->q, 1, &si, d->fence));
		CHECK(vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(d->dev, 1, &d->fence));
	}
	if (raw)
		vkDestroyQueryPool(d->dev, qp, NULL);
	qsort(per, n, sizeof *per, cmp_double);
	printf("region %.1f ns (median of %d submissions of %d regions)\n", per[n / 2], n, k);
	free(per);
}

static void destroy_device(device *d) {
	vkDeviceWaitIdle(d->dev);
	vkDestroyFence(d->dev, d->fence, NULL);
	vkFreeCommandBuffers(d->dev, d->pool, 1, &d->cmd);
	vkDestroyCommandPool(d->dev, d->pool, NULL);
	vkDestroyDevice(d->dev, NULL);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: lifecycle recreate|two|nodestroy|v10 N, or cost N K\n");
		return 2;
	}
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	if (strcmp(mode, "recreate") == 0) {
		for (int round = 0; round < 2; round++) {
			instance i = make_instance(VK_API_VERSION_1_2);
			device d = make_device(&i);
			use(&d, n);
			destroy_device(&d);
			vkDestroyInstance(i.inst, NULL);
		}
	} else if (strcmp(mode, "two") == 0) {
		instance i = make_instance(VK_API_VERSION_1_2);
		device a = make_device(&i), b = make_device(&i);
		for (int k = 0; k < n; k++) {
			use(&a, 1);
			use(&b, 1);
		}
		destroy_device(&a);
		destroy_device(&b);
		vkDestroyInstance(i.inst, NULL);
	} else if (strcmp(mode, "nodestroy") == 0) {
		instance i = make_instance(VK_API_VERSION_1_2);
		device d = make_device(&i);
		use(&d, n);
	} else if ((strcmp(mode, "cost") == 0 || strcmp(mode, "rawcost") == 0) && argc == 4) {
		instance i = make_instance(VK_API_VERSION_1_2);
		device d = make_device(&i);
		cost(&d, n, atoi(argv[3]), mode[0] == 'r');
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	} else if (strcmp(mode, "v10") == 0) {
		instance i = make_instance(VK_API_VERSION_1_0);
		device d = make_device(&i);
		use(&d, n);
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
