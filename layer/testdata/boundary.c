// boundary.c: a program that marks its frames with VK_EXT_frame_boundary
// and never presents, for TestFrameBoundaryUnderLayer. It asks for the
// extension, its feature (in the middle of a Features2 chain) and enables
// both (the feature behind another in the device's chain), then makes N
// submissions of a command buffer with one label, a VkFrameBoundaryEXT in
// each, with the frame-end bit every K (first in the chain, or behind a
// VkTimelineSemaphoreSubmitInfo), half through vkQueueSubmit2 where the
// device has it. After each call it checks that its chains came back as
// it made them.
//
//   boundary N K    exits 3 where the extension is not offered
#include "vkprog.h"

#define FB_NAME "VK_EXT_frame_boundary"
#define FB_FEATURES ((VkStructureType)1000375000)
#define FB_INFO ((VkStructureType)1000375001)

// The registry's structs, which Debian's headers (1.3.239) predate.
typedef struct {
	VkStructureType sType;
	void *pNext;
	VkBool32 frameBoundary;
} fb_features;

typedef struct {
	VkStructureType sType;
	const void *pNext;
	VkFlags flags;
	uint64_t frameID;
	uint32_t imageCount;
	const VkImage *pImages;
	uint32_t bufferCount;
	const VkBuffer *pBuffers;
	uint64_t tagName;
	size_t tagSize;
	const void *pTag;
} fb_info;

static void expect(int ok, const char *what) {
	if (!ok) {
		fprintf(stderr, "boundary: %s\n", what);
		exit(4);
	}
}

static int offered(VkPhysicalDevice pd) {
	uint32_t n = 0;
	CHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL));
	VkExtensionProperties *e = calloc(n, sizeof *e);
	CHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e));
	int found = 0;
	for (uint32_t i = 0; i < n; i++)
		found |= strcmp(e[i].extensionName, FB_NAME) == 0;
	free(e);
	return found;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: boundary N K\n");
		return 2;
	}
	int n = atoi(argv[1]), k = atoi(argv[2]);
	instance i = make_instance(VK_API_VERSION_1_2);
	if (!offered(i.pd)) {
		printf("%s is not offered\n", FB_NAME);
		return 3;
	}
	VkPhysicalDeviceTimelineSemaphoreFeatures tl = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
	fb_features fb = {.sType = FB_FEATURES, .pNext = &tl};
	VkPhysicalDeviceSynchronization2Features s2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, .pNext = &fb};
	VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s2};
	vkGetPhysicalDeviceFeatures2(i.pd, &f2);
	expect(fb.frameBoundary == VK_TRUE, "frameBoundary not supported");
	expect(s2.pNext == &fb && fb.pNext == &tl, "the Features2 chain came back changed");

	int sync2 = s2.synchronization2 == VK_TRUE;
	fb_features fbOn = {.sType = FB_FEATURES, .frameBoundary = VK_TRUE};
	VkPhysicalDeviceSynchronization2Features s2On = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES,
							 .pNext = &fbOn, .synchronization2 = (VkBool32)sync2};
	const char *exts[] = {FB_NAME, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME};
	device d = make_device_with(&i, exts, sync2 ? 2 : 1, &s2On);
	expect(s2On.pNext == &fbOn && fbOn.pNext == NULL, "the device's chain came back changed");
	PFN_vkQueueSubmit2KHR submit2 = sync2 ? (PFN_vkQueueSubmit2KHR)vkGetDeviceProcAddr(d.dev, "vkQueueSubmit2KHR") : NULL;

	for (int s = 0; s < n; s++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		label(&d, "work");
		d.end(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		fb_info info = {.sType = FB_INFO, .flags = s % k == k - 1 ? 1u : 0u, .frameID = (uint64_t)(s / k)};
		VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, .pNext = &info};
		const void *chain = s % 4 < 2 ? (const void *)&info : (const void *)&ts;
		if (submit2 && s % 2 == 1) {
			VkCommandBufferSubmitInfo cs = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, .commandBuffer = d.cmd};
			VkSubmitInfo2 si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .pNext = &info, .commandBufferInfoCount = 1,
					    .pCommandBufferInfos = &cs};
			CHECK(submit2(d.q, 1, &si, d.fence));
			expect(si.pNext == &info, "the submission's chain came back changed");
		} else {
			VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = chain, .commandBufferCount = 1,
					   .pCommandBuffers = &d.cmd};
			CHECK(vkQueueSubmit(d.q, 1, &si, d.fence));
			expect(si.pNext == chain && ts.pNext == &info, "the submission's chain came back changed");
		}
		CHECK(vkWaitForFences(d.dev, 1, &d.fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(d.dev, 1, &d.fence));
	}
	printf("submissions %d frames %d\n", n, n / k);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	return 0;
}
