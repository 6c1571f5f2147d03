// vvl-race: does the Khronos validation layer, alone, survive one thread
// querying its instance's physical device while others create and destroy
// instances and devices (all of it valid Vulkan)? No Framescope. The
// threads' shape is that of layer/testdata/shapes.c "threads"; the main
// thread's queries are those a profiler makes of a new device (properties,
// queue families, memory, features), in a loop until the others finish.
// Run with VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation. Prints the
// queries made; a crash is the answer.
#include <pthread.h>
#include <stdatomic.h>

#include "../../layer/testdata/vkprog.h"

static atomic_int done;

static void *churn(void *arg) {
	(void)arg;
	for (int k = 0; k < 24; k++) {
		instance i = make_instance(VK_API_VERSION_1_3);
		device d = make_device(&i);
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	}
	atomic_fetch_add(&done, 1);
	return NULL;
}

int main(void) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	pthread_t t[4];
	for (int k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, churn, NULL);
	long queries = 0;
	while (atomic_load(&done) < 4) {
		uint32_t n = 0;
		vkEnumeratePhysicalDevices(i.inst, &n, NULL);
		VkPhysicalDevice pds[16];
		n = n > 16 ? 16 : n;
		vkEnumeratePhysicalDevices(i.inst, &n, pds);
		for (uint32_t p = 0; p < n; p++) {
			VkPhysicalDeviceProperties props;
			vkGetPhysicalDeviceProperties(pds[p], &props);
			uint32_t nq = 0;
			vkGetPhysicalDeviceQueueFamilyProperties(pds[p], &nq, NULL);
			VkPhysicalDeviceMemoryProperties mem;
			vkGetPhysicalDeviceMemoryProperties(pds[p], &mem);
			VkPhysicalDeviceFeatures f;
			vkGetPhysicalDeviceFeatures(pds[p], &f);
			queries += 5;
		}
	}
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	printf("ok: %ld queries\n", queries);
	return 0;
}
