// A headless Vulkan program whose frames have a known limit, for the
// test of what limits each frame. A frame is one submission, then a wait
// for it on a fence, then what the CPU does before the next (run it under
// framescope run -frame-every 1, which ends a frame at each submission):
//
//   bound cpu N         N frames bound by the CPU: a fill of 64 KiB, then
//                       BOUND_SPIN_MS (20) ms of the CPU spinning
//   bound gpu N         N frames bound by the GPU: BOUND_FILLS (1) fills of
//                       BOUND_FILL_MIB (128) MiB, waited for; no spin
//   bound mixed N SEED  each frame one or the other, drawn from SEED
//
// It prints the schedule, a letter a frame ("c" or "g"), after
// "schedule: ", and each frame's GPU time by its own two timestamps
// around its work, in ns, after "gpu ns: "; then "ok", and exits 0 when
// it ends well.
#include "faults.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "vkprog.h"

// frame records fills fills of size bytes of buf between two timestamps
// of qp, submits them, waits for them, then spins for spin_ms; it
// returns the GPU time between the timestamps, in ticks.
static uint64_t frame(device *d, VkQueryPool qp, VkBuffer buf, VkDeviceSize size, int fills, double spin_ms) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	CHECK(vkBeginCommandBuffer(d->cmd, &bi));
	vkCmdResetQueryPool(d->cmd, qp, 0, 2);
	vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
	for (int k = 0; k < fills; k++) {
		vkCmdFillBuffer(d->cmd, buf, 0, size, 0x5eed + k);
		VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
				      .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
		vkCmdPipelineBarrier(d->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	}
	vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
	CHECK(vkEndCommandBuffer(d->cmd));
	submit_wait(d, &d->cmd, 1);
	uint64_t ts[2];
	CHECK(vkGetQueryPoolResults(d->dev, qp, 0, 2, sizeof ts, ts, sizeof ts[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
	if (spin_ms > 0)
		spin(spin_ms);
	return ts[1] - ts[0];
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
	int fills = (int)env_or("BOUND_FILLS", 1);
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(i.pd, &props);
	VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
	VkQueryPool qp;
	CHECK(vkCreateQueryPool(d.dev, &qi, NULL, &qp));
	char *schedule = calloc((size_t)n + 1, 1);
	double *gpu_ns = calloc((size_t)n, sizeof *gpu_ns);
	srand(seed);
	for (int k = 0; k < n; k++) {
		int gpu = strcmp(argv[1], "gpu") == 0 || (strcmp(argv[1], "mixed") == 0 && rand() % 2);
		schedule[k] = gpu ? 'g' : 'c';
		gpu_ns[k] = props.limits.timestampPeriod * (double)frame(&d, qp, buf, gpu ? big : 64 * 1024, gpu ? fills : 1, gpu ? 0 : spin_ms);
	}
	printf("schedule: %s\ngpu ns:", schedule);
	for (int k = 0; k < n; k++)
		printf(" %.0f", gpu_ns[k]);
	printf("\n");
	free(schedule);
	free(gpu_ns);
	vkDestroyQueryPool(d.dev, qp, NULL);
	vkDestroyBuffer(d.dev, buf, NULL);
	vkFreeMemory(d.dev, mem, NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	printf("ok\n");
	return 0;
}
