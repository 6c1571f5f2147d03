// A headless Vulkan program in C, as the layer's tests run it: it records
// nested debug-utils label regions into a command buffer, submits it and
// waits, and makes and destroys its objects in the ways programs do.
//
//   lifecycle recreate N   instance and device made, used and destroyed, twice
//   lifecycle two N        two devices alive at once, used in turn
//   lifecycle nodestroy N  exits without destroying anything
//   lifecycle v10 N        a Vulkan 1.0 instance (labels need debug utils only)
//   lifecycle span N       each submission carries two command buffers, a
//                          label begun in the first ("spans") and ended in
//                          the second, each with a region of its own
//                          ("first", "second"); Mesa 22.3's lavapipe
//                          crashes on such an end (valid in a primary)
//   lifecycle open N       the same, the label never ended
//   lifecycle exit N       a thread records and submits labelled regions
//                          without end while the main thread, N ms later,
//                          exits the process (nothing destroyed, nothing
//                          waited for)
//   lifecycle secondary N  each submission: a primary that executes a
//                          secondary recorded once ("cached", its region
//                          "cached"), then, inside a render pass, one
//                          recorded every time to continue it (its region
//                          "in pass"); the primary's own region is "outer"
//   lifecycle cost N K HOW KIB
//                          N submissions of K regions, each filling KIB KiB
//                          of a buffer (0: no work), marked by HOW: labels,
//                          raw (two timestamps) or plain (none); prints the
//                          medians of a region's CPU time, a frame's CPU
//                          time (recording and submitting) and its GPU time
//
// Each use submits the command buffer N times; each submission carries 3
// labelled regions: "outer" holding "inner a" and "inner b".
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "vkprog.h"

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
		submit_wait(d, &d->cmd, 1);
	}
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// The cost program's ways to mark a region: not at all (the GPU work
// alone), with a debug label (what the layer times), or with two raw
// timestamps (the floor a profiler's zone is measured against).
enum { PLAIN, LABELS, RAW };

// fnv1a folds n bytes of p into h.
static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n) {
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

// cost records k regions a submission, each filling chunk KiB of a
// buffer (0: no work), n submissions, and prints medians over the
// submissions: the CPU time of recording one region's marks and work, of
// a frame (recording and submitting), and the GPU time of the frame (the
// program's own two timestamps around it); where the host can read the
// buffer, a checksum of what every frame left in it (what the program
// rendered, which the layer must not change).
// slowest prints the $LIFECYCLE_SLOWEST slowest frames: their index and
// CPU time, in parts.
static void slowest(const double *cpu, double (*part)[3], int n) {
	const char *e = getenv("LIFECYCLE_SLOWEST");
	int m = e ? atoi(e) : 0;
	char *seen = calloc(n, 1);
	for (int r = 0; r < m && r < n; r++) {
		int w = -1;
		for (int f = 0; f < n; f++)
			if (!seen[f] && (w < 0 || cpu[f] > cpu[w]))
				w = f;
		seen[w] = 1;
		printf("slow frame %d: %.1f us (begin %.1f, regions %.1f, end and submit %.1f)\n", w, cpu[w] / 1e3, part[w][0] / 1e3,
		       part[w][1] / 1e3, part[w][2] / 1e3);
	}
	free(seen);
	free(part);
}

static void cost(instance *i, device *d, int n, int k, int how, VkDeviceSize chunk) {
	double *region = calloc(n, sizeof *region), *cpu = calloc(n, sizeof *cpu), *gpu = calloc(n, sizeof *gpu);
	// Each frame's CPU in parts (begin, regions, end and submit), for
	// $LIFECYCLE_SLOWEST: that many of the slowest frames are printed.
	double (*part)[3] = calloc(n, sizeof *part);
	VkQueryPool qp;
	VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
				    .queryCount = 2 * k + 2};
	CHECK(vkCreateQueryPool(d->dev, &qi, NULL, &qp));
	VkDeviceMemory mem;
	int host;
	VkDeviceSize size = 16 * (chunk ? chunk : 4);
	VkBuffer buf = buffer(i, d, size, &mem, &host);
	uint64_t sum = 0xcbf29ce484222325ull;
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(i->pd, &props);
	for (int f = 0; f < n; f++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		double t0 = now_ns();
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		vkCmdResetQueryPool(d->cmd, qp, 0, 2 * k + 2);
		vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 2 * k);
		double t1 = now_ns();
		part[f][0] = t1 - t0;
		for (int j = 0; j < k; j++) {
			if (how == LABELS)
				label(d, "region");
			else if (how == RAW)
				vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 2 * j);
			if (chunk)
				vkCmdFillBuffer(d->cmd, buf, (j % 16) * chunk, chunk, (uint32_t)(f * k + j));
			if (how == LABELS)
				d->end(d->cmd);
			else if (how == RAW)
				vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2 * j + 1);
		}
		double t2 = now_ns();
		region[f] = (t2 - t1) / k;
		part[f][1] = t2 - t1;
		if (host && chunk) { // the fills made visible to the host's read
			VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
					      .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
			vkCmdPipelineBarrier(d->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
		}
		vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2 * k + 1);
		CHECK(vkEndCommandBuffer(d->cmd));
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->cmd};
		CHECK(vkQueueSubmit(d->q, 1, &si, d->fence));
		cpu[f] = now_ns() - t0;
		part[f][2] = cpu[f] - part[f][0] - part[f][1];
		CHECK(vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(d->dev, 1, &d->fence));
		uint64_t ts[2];
		CHECK(vkGetQueryPoolResults(d->dev, qp, 2 * k, 2, sizeof ts, ts, sizeof ts[0], VK_QUERY_RESULT_64_BIT));
		gpu[f] = (double)(ts[1] - ts[0]) * props.limits.timestampPeriod;
		void *p;
		if (host && chunk && vkMapMemory(d->dev, mem, 0, size, 0, &p) == VK_SUCCESS) {
			sum = fnv1a(sum, p, size);
			vkUnmapMemory(d->dev, mem);
		}
	}
	vkDestroyBuffer(d->dev, buf, NULL);
	vkFreeMemory(d->dev, mem, NULL);
	vkDestroyQueryPool(d->dev, qp, NULL);
	// The medians of each part of a frame's CPU, where the layer's cost
	// sits (begin: vkBeginCommandBuffer; end and submit: vkEndCommandBuffer
	// and vkQueueSubmit, where the layer's frame ends).
	double *col = calloc(n, sizeof *col), med[3];
	for (int c = 0; c < 3; c++) {
		for (int f = 0; f < n; f++)
			col[f] = part[f][c];
		qsort(col, n, sizeof *col, cmp_double);
		med[c] = col[n / 2];
	}
	free(col);
	printf("parts (medians): begin %.1f us, regions %.1f us, end and submit %.1f us\n", med[0] / 1e3, med[1] / 1e3, med[2] / 1e3);
	slowest(cpu, part, n);
	qsort(region, n, sizeof *region, cmp_double);
	qsort(cpu, n, sizeof *cpu, cmp_double);
	qsort(gpu, n, sizeof *gpu, cmp_double);
	printf("region %.1f ns, frame CPU %.1f us, frame GPU %.1f us (medians of %d submissions of %d regions); frame CPU p99 %.1f us\n",
	       region[n / 2], cpu[n / 2] / 1e3, gpu[n / 2] / 1e3, n, k, cpu[n * 99 / 100] / 1e3);
	if (host && chunk)
		printf("checksum %016llx\n", (unsigned long long)sum);
	free(region), free(cpu), free(gpu);
}

// secondary records, n times, a primary that executes a secondary
// recorded once outside any render pass, then begins a render pass whose
// contents are secondaries and executes one recorded anew to continue it.
static void secondary(instance *i, device *d, int n) {
	target t = make_target(i, d, 64);
	VkRenderPass rp = t.rp;
	VkFramebuffer fb = t.fb;

	VkCommandBuffer sec[2];
	VkCommandBufferAllocateInfo sai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
					   .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY, .commandBufferCount = 2};
	CHECK(vkAllocateCommandBuffers(d->dev, &sai, sec));
	VkCommandBufferInheritanceInfo none = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	VkCommandBufferBeginInfo cached = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .pInheritanceInfo = &none};
	VkCommandBuffer keep = d->cmd;
	CHECK(vkBeginCommandBuffer(sec[0], &cached));
	d->cmd = sec[0];
	label(d, "cached");
	d->end(d->cmd);
	CHECK(vkEndCommandBuffer(sec[0]));
	VkCommandBufferInheritanceInfo inpass = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO, .renderPass = rp,
						 .framebuffer = fb};
	VkCommandBufferBeginInfo cont = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					 .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT | VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
					 .pInheritanceInfo = &inpass};
	for (int k = 0; k < n; k++) {
		CHECK(vkBeginCommandBuffer(sec[1], &cont));
		d->cmd = sec[1];
		label(d, "in pass");
		d->end(d->cmd);
		CHECK(vkEndCommandBuffer(sec[1]));
		d->cmd = keep;
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		label(d, "outer");
		vkCmdExecuteCommands(d->cmd, 1, &sec[0]);
		VkClearValue clear = {0};
		VkRenderPassBeginInfo rb = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = rp, .framebuffer = fb,
					    .renderArea = {{0, 0}, {64, 64}}, .clearValueCount = 1, .pClearValues = &clear};
		vkCmdBeginRenderPass(d->cmd, &rb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
		vkCmdExecuteCommands(d->cmd, 1, &sec[1]);
		vkCmdEndRenderPass(d->cmd);
		d->end(d->cmd);
		CHECK(vkEndCommandBuffer(d->cmd));
		submit_wait(d, &d->cmd, 1);
	}
	vkFreeCommandBuffers(d->dev, d->pool, 2, sec);
	destroy_target(d, &t);
}

// span submits, n times, two command buffers with a label begun in the
// first and ended in the second, or, with open set, never.
static void span(device *d, int n, int open) {
	VkCommandBuffer two[2];
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2};
	CHECK(vkAllocateCommandBuffers(d->dev, &ai, two));
	VkCommandBuffer keep = d->cmd;
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		for (int j = 0; j < 2; j++) {
			d->cmd = two[j];
			CHECK(vkBeginCommandBuffer(d->cmd, &bi));
			if (j == 1 && !open)
				d->end(d->cmd); // "spans"
			label(d, j == 0 ? "first" : "second");
			d->end(d->cmd);
			if (j == 0)
				label(d, "spans");
			CHECK(vkEndCommandBuffer(d->cmd));
		}
		submit_wait(d, two, 2);
	}
	d->cmd = keep;
	vkFreeCommandBuffers(d->dev, d->pool, 2, two);
}

// busy records and submits labelled regions until the process ends.
static void *busy(void *arg) {
	device *d = arg;
	for (;;)
		use(d, 1);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: lifecycle recreate|two|nodestroy|v10 N, or cost N K labels|raw|plain KIB\n");
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
	} else if (strcmp(mode, "cost") == 0 && argc == 6) {
		int how = strcmp(argv[4], "labels") == 0 ? LABELS : strcmp(argv[4], "raw") == 0 ? RAW : PLAIN;
		instance i = make_instance(VK_API_VERSION_1_2);
		device d = make_device(&i);
		cost(&i, &d, n, atoi(argv[3]), how, (VkDeviceSize)atoi(argv[5]) << 10);
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	} else if (strcmp(mode, "span") == 0 || strcmp(mode, "open") == 0) {
		instance i = make_instance(VK_API_VERSION_1_2);
		device d = make_device(&i);
		span(&d, n, mode[0] == 'o');
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	} else if (strcmp(mode, "exit") == 0) {
		instance i = make_instance(VK_API_VERSION_1_2);
		static device d;
		d = make_device(&i);
		pthread_t th;
		pthread_create(&th, NULL, busy, &d);
		usleep((useconds_t)n * 1000);
		exit(0);
	} else if (strcmp(mode, "secondary") == 0) {
		instance i = make_instance(VK_API_VERSION_1_2);
		device d = make_device(&i);
		secondary(&i, &d, n);
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
