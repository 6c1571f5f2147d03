// A headless Vulkan program whose frames have a known limit, for the
// test of what limits each frame. A frame is one submission, then a wait
// for it on a fence, then what the CPU does before the next (run it under
// framescope run -frame-every 1, which ends a frame at each submission):
//
//   bound cpu N         N frames bound by the CPU: a fill of 64 KiB, then
//                       BOUND_SPIN_MS (20) ms of the CPU spinning
//   bound gpu N         N frames bound by the GPU: a fill of BOUND_FILL_MIB
//                       (128) MiB, waited for; no spin
//   bound mixed N SEED  each frame one or the other, drawn from SEED; it
//                       prints the schedule, a letter a frame ("c" or "g"),
//                       after "schedule: "
//
// It prints "ok" and exits 0 when it ends well.
#include "faults.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "vkprog.h"

static double env_or(const char *name, double def) {
	const char *v = getenv(name);
	return v && *v ? atof(v) : def;
}

// spin keeps the CPU busy for ms milliseconds.
static void spin(double ms) {
	double until = now_ns() + ms * 1e6;
	volatile uint64_t x = 0;
	while (now_ns() < until)
		x++;
}

// frame records a fill of size bytes of buf, submits it, waits for it,
// then spins for spin_ms.
static void frame(device *d, VkBuffer buf, VkDeviceSize size, double spin_ms) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	CHECK(vkBeginCommandBuffer(d->cmd, &bi));
	vkCmdFillBuffer(d->cmd, buf, 0, size, 0x5eed);
	CHECK(vkEndCommandBuffer(d->cmd));
	submit_wait(d, &d->cmd, 1);
	if (spin_ms > 0)
		spin(spin_ms);
}

int main(int argc, char **argv) {
	report_faults();
	if (argc < 3 || (strcmp(argv[1], "mixed") == 0 && argc < 4)) {
		fprintf(stderr, "usage: bound cpu|gpu N, or bound mixed N SEED\n");
		return 2;
	}
	int n = atoi(argv[2]);
	unsigned seed = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	double spin_ms = env_or("BOUND_SPIN_MS", 20);
	VkDeviceSize big = (VkDeviceSize)(env_or("BOUND_FILL_MIB", 128) * 1024 * 1024) & ~(VkDeviceSize)3;
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	VkDeviceMemory mem;
	int host;
	VkBuffer buf = buffer(&i, &d, big, &mem, &host);
	char *schedule = calloc((size_t)n + 1, 1);
	srand(seed);
	for (int k = 0; k < n; k++) {
		int gpu = strcmp(argv[1], "gpu") == 0 || (strcmp(argv[1], "mixed") == 0 && rand() % 2);
		schedule[k] = gpu ? 'g' : 'c';
		frame(&d, buf, gpu ? big : 64 * 1024, gpu ? 0 : spin_ms);
	}
	printf("schedule: %s\n", schedule);
	free(schedule);
	vkDestroyBuffer(d.dev, buf, NULL);
	vkFreeMemory(d.dev, mem, NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	printf("ok\n");
	return 0;
}
