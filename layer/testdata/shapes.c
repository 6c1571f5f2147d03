// Programs that do what Vulkan allows in shapes the layer must hold for:
//
//   shapes threads N      the main thread records and submits labelled
//                         regions N times while four other threads each make
//                         and destroy an instance and a device 24 times over,
//                         recording and submitting once on each
//   shapes unenabled N    labels through vkCmdBeginDebugUtilsLabelEXT, asked
//                         of the device, on an instance that did not enable
//                         VK_EXT_debug_utils (libplacebo does so: the
//                         loader answers, and tolerates the call), N
//                         submissions
//   shapes many N         300 command buffers, each recorded once with a
//                         labelled region, all submitted together N times
//                         (the GPU runs 600 N zones: the command buffer's
//                         and the label's)
//   shapes names N        N regions, each labelled anew ("label 0",
//                         "label 1", ...), 100 a submission, then a
//                         submission of a render pass
//   shapes reset N        N times: a command buffer begun, a region
//                         labelled "abandoned" in it, and its pool reset
//                         before it ends (as Mesa's zink does); begun
//                         again, "abandoned" again, and reset alone
//                         (vkResetCommandBuffer); then recorded whole
//                         ("kept") and submitted
//   shapes mt N           16 threads, each with a command pool and buffer of
//                         its own, record labelled regions and submit them
//                         to the one queue under a mutex, N times each,
//                         each waiting for its own fence
//   shapes deep N         N submissions of K nested labels ("L0" ... ),
//                         K from 60 to 67 in turn (about the layer's stack of
//                         64 open zones, with the command buffer's own),
//                         then a render pass begun, the innermost label
//                         ended inside it (begun before it), the render
//                         pass ended, the other labels ended
//   shapes continue N     a secondary that continues a render pass
//                         (RENDER_PASS_CONTINUE, simultaneous use), with a
//                         label, recorded once and executed by two
//                         primaries recorded once, each in its render pass;
//                         the two primaries submitted together N times
//   shapes procaddr N     prints whether the device answers the commands
//                         of the calibrated-timestamps extensions, which it
//                         did not enable, then N labelled submissions
//   shapes statsquery N   N submissions of a labelled region ("outer")
//                         holding a pipeline statistics query of the
//                         program's own, which holds a labelled region
//                         ("inner") of a buffer fill; prints the query's
//                         count of compute shader invocations
//   shapes multidraw N    N submissions, each a render pass of one
//                         vkCmdDrawMultiEXT of three draws (VK_EXT_multi_draw),
//                         as Mesa's zink draws; exits 4 where the device
//                         lacks the extension
//
// Each prints "ok" and exits 0 when it ends well; one that faults says
// where (faults.h).
#include "faults.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "vkprog.h"

static void record_submit(device *d, int n) {
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		label(d, "outer");
		label(d, "inner");
		d->end(d->cmd);
		d->end(d->cmd);
		CHECK(vkEndCommandBuffer(d->cmd));
		submit_wait(d, &d->cmd, 1);
	}
}

static void *churn(void *arg) {
	(void)arg;
	for (int k = 0; k < 24; k++) {
		instance i = make_instance(VK_API_VERSION_1_3);
		device d = make_device(&i);
		record_submit(&d, 1);
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
	}
	return NULL;
}

static void threads(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	pthread_t t[4];
	for (int k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, churn, NULL);
	record_submit(&d, n);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

static void unenabled(int n) {
	instance i = {0};
	VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "shapes",
				 .apiVersion = VK_API_VERSION_1_3};
	VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
	CHECK(vkCreateInstance(&ci, NULL, &i.inst));
	uint32_t np = 1;
	VkResult r = vkEnumeratePhysicalDevices(i.inst, &np, &i.pd);
	if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || np == 0) {
		fprintf(stderr, "no physical device\n");
		exit(2);
	}
	device d = make_device(&i); // asks the device for the label commands
	record_submit(&d, n);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// record_work records cmd afresh: one label, "work", and no GPU work.
static void record_work(device *d, VkCommandBuffer cmd) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	CHECK(vkBeginCommandBuffer(cmd, &bi));
	VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "work"};
	d->begin(cmd, &l);
	d->end(cmd);
	CHECK(vkEndCommandBuffer(cmd));
}

#define MANY 300

static void many(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	VkCommandBuffer cmds[MANY];
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d.pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = MANY};
	CHECK(vkAllocateCommandBuffers(d.dev, &ai, cmds));
	for (int k = 0; k < MANY; k++)
		record_work(&d, cmds[k]);
	for (int k = 0; k < n; k++)
		submit_wait(&d, cmds, MANY);
	vkFreeCommandBuffers(d.dev, d.pool, MANY, cmds);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// leak is a program that resets its command pool every frame and
// allocates the frame's command buffers from it afresh, never freeing
// those of earlier frames (reset, they lie idle): n frames of LEAK
// command buffers of one label each, submitted together and waited for.
// Past 256 such command buffers, the layer keeps no more recordings at
// once but those of the idle ones, whose slots it gives to the new.
#define LEAK 8

static void leak(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	for (int f = 0; f < n; f++) {
		CHECK(vkResetCommandPool(d.dev, d.pool, 0));
		VkCommandBuffer cmds[LEAK];
		VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d.pool,
						  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = LEAK};
		CHECK(vkAllocateCommandBuffers(d.dev, &ai, cmds));
		for (int k = 0; k < LEAK; k++)
			record_work(&d, cmds[k]);
		submit_wait(&d, cmds, LEAK);
	}
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// vertex_spv is glslc -O of
//   #version 450
//   void main() { gl_Position = vec4(0.0, 0.0, 0.0, 1.0); }
static const uint32_t vertex_spv[] = {
    0x07230203, 0x00010000, 0x000d000b, 0x00000015, 0x00000000, 0x00020011, 0x00000001, 0x0006000b, 0x00000001, 0x4c534c47,
    0x6474732e, 0x3035342e, 0x00000000, 0x0003000e, 0x00000000, 0x00000001, 0x0006000f, 0x00000000, 0x00000004, 0x6e69616d,
    0x00000000, 0x0000000d, 0x00050048, 0x0000000b, 0x00000000, 0x0000000b, 0x00000000, 0x00050048, 0x0000000b, 0x00000001,
    0x0000000b, 0x00000001, 0x00050048, 0x0000000b, 0x00000002, 0x0000000b, 0x00000003, 0x00050048, 0x0000000b, 0x00000003,
    0x0000000b, 0x00000004, 0x00030047, 0x0000000b, 0x00000002, 0x00020013, 0x00000002, 0x00030021, 0x00000003, 0x00000002,
    0x00030016, 0x00000006, 0x00000020, 0x00040017, 0x00000007, 0x00000006, 0x00000004, 0x00040015, 0x00000008, 0x00000020,
    0x00000000, 0x0004002b, 0x00000008, 0x00000009, 0x00000001, 0x0004001c, 0x0000000a, 0x00000006, 0x00000009, 0x0006001e,
    0x0000000b, 0x00000007, 0x00000006, 0x0000000a, 0x0000000a, 0x00040020, 0x0000000c, 0x00000003, 0x0000000b, 0x0004003b,
    0x0000000c, 0x0000000d, 0x00000003, 0x00040015, 0x0000000e, 0x00000020, 0x00000001, 0x0004002b, 0x0000000e, 0x0000000f,
    0x00000000, 0x0004002b, 0x00000006, 0x00000010, 0x00000000, 0x0004002b, 0x00000006, 0x00000011, 0x3f800000, 0x0007002c,
    0x00000007, 0x00000012, 0x00000010, 0x00000010, 0x00000010, 0x00000011, 0x00040020, 0x00000013, 0x00000003, 0x00000007,
    0x00050036, 0x00000002, 0x00000004, 0x00000000, 0x00000003, 0x000200f8, 0x00000005, 0x00050041, 0x00000013, 0x00000014,
    0x0000000d, 0x0000000f, 0x0003003e, 0x00000014, 0x00000012, 0x000100fd, 0x00010038,
};

static int has_device_ext(VkPhysicalDevice pd, const char *name) {
	uint32_t n = 0;
	vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
	VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
	vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e);
	int found = 0;
	for (uint32_t i = 0; i < n; i++)
		found |= strcmp(e[i].extensionName, name) == 0;
	free(e);
	return found;
}

// pipeline makes a render pass of no attachment, its framebuffer, and a
// pipeline of the vertex stage alone, rasterization discarded.
static VkPipeline pipeline(device *d, VkRenderPass *rp, VkFramebuffer *fb, VkPipelineLayout *layout, VkShaderModule *mod) {
	VkSubpassDescription sub = {.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS};
	VkRenderPassCreateInfo rpi = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, .subpassCount = 1, .pSubpasses = &sub};
	CHECK(vkCreateRenderPass(d->dev, &rpi, NULL, rp));
	VkFramebufferCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, .renderPass = *rp, .width = 16, .height = 16, .layers = 1};
	CHECK(vkCreateFramebuffer(d->dev, &fi, NULL, fb));
	VkShaderModuleCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = sizeof vertex_spv, .pCode = vertex_spv};
	CHECK(vkCreateShaderModule(d->dev, &si, NULL, mod));
	VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
	CHECK(vkCreatePipelineLayout(d->dev, &li, NULL, layout));
	VkPipelineShaderStageCreateInfo stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
						 .stage = VK_SHADER_STAGE_VERTEX_BIT, .module = *mod, .pName = "main"};
	VkPipelineVertexInputStateCreateInfo vin = {.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
	VkPipelineInputAssemblyStateCreateInfo ia = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
						     .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
	VkPipelineRasterizationStateCreateInfo rs = {.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
						     .rasterizerDiscardEnable = VK_TRUE, .lineWidth = 1};
	VkGraphicsPipelineCreateInfo gi = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, .stageCount = 1, .pStages = &stage,
					   .pVertexInputState = &vin, .pInputAssemblyState = &ia, .pRasterizationState = &rs,
					   .layout = *layout, .renderPass = *rp};
	VkPipeline p;
	CHECK(vkCreateGraphicsPipelines(d->dev, VK_NULL_HANDLE, 1, &gi, NULL, &p));
	return p;
}

static void begin_labelled(device *d, const char *name) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	CHECK(vkBeginCommandBuffer(d->cmd, &bi));
	label(d, name);
	d->end(d->cmd);
}

static void reset(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	for (int k = 0; k < n; k++) {
		begin_labelled(&d, "abandoned");
		CHECK(vkResetCommandPool(d.dev, d.pool, 0));
		begin_labelled(&d, "abandoned");
		CHECK(vkResetCommandBuffer(d.cmd, 0));
		begin_labelled(&d, "kept");
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
	}
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// deep: labels nested about the layer's stack, the innermost ended inside
// a render pass begun after it (Vulkan lets a primary's label and render
// pass interleave).
static void deep(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	target t = make_target(&i, &d, 16);
	for (int k = 0; k < n; k++) {
		int depth = 60 + k % 8;
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		for (int j = 0; j < depth; j++) {
			char name[16];
			snprintf(name, sizeof name, "L%d", j);
			label(&d, name);
		}
		VkClearValue cv = {0};
		VkRenderPassBeginInfo rb = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = t.rp, .framebuffer = t.fb,
					    .renderArea = {{0, 0}, {16, 16}}, .clearValueCount = 1, .pClearValues = &cv};
		vkCmdBeginRenderPass(d.cmd, &rb, VK_SUBPASS_CONTENTS_INLINE);
		d.end(d.cmd); // the innermost label, begun before the render pass
		vkCmdEndRenderPass(d.cmd);
		for (int j = 1; j < depth; j++)
			d.end(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
	}
	destroy_target(&d, &t);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// cont: a secondary recorded once to continue a render pass, executed by
// two primaries at each of n submissions.
static void cont(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	target t = make_target(&i, &d, 16);
	VkCommandBuffer sec, prim[2];
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d.pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY, .commandBufferCount = 1};
	CHECK(vkAllocateCommandBuffers(d.dev, &ai, &sec));
	ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 2;
	CHECK(vkAllocateCommandBuffers(d.dev, &ai, prim));
	VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO, .renderPass = t.rp,
					      .subpass = 0, .framebuffer = t.fb};
	VkCommandBufferBeginInfo sbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT | VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
					.pInheritanceInfo = &inh};
	CHECK(vkBeginCommandBuffer(sec, &sbi));
	VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, .pLabelName = "in secondary"};
	d.begin(sec, &l);
	d.end(sec);
	CHECK(vkEndCommandBuffer(sec));
	for (int p = 0; p < 2; p++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
		CHECK(vkBeginCommandBuffer(prim[p], &bi));
		VkClearValue cv = {0};
		VkRenderPassBeginInfo rb = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = t.rp, .framebuffer = t.fb,
					    .renderArea = {{0, 0}, {16, 16}}, .clearValueCount = 1, .pClearValues = &cv};
		vkCmdBeginRenderPass(prim[p], &rb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
		vkCmdExecuteCommands(prim[p], 1, &sec);
		vkCmdEndRenderPass(prim[p]);
		CHECK(vkEndCommandBuffer(prim[p]));
	}
	for (int k = 0; k < n; k++)
		submit_wait(&d, prim, 2);
	vkFreeCommandBuffers(d.dev, d.pool, 2, prim);
	vkFreeCommandBuffers(d.dev, d.pool, 1, &sec);
	destroy_target(&d, &t);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// procaddr: the device's answers for commands of an extension the
// program did not enable (the layer enables it for its own use).
static void procaddr(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	printf("vkGetCalibratedTimestampsEXT %d vkGetCalibratedTimestampsKHR %d\n",
	       vkGetDeviceProcAddr(d.dev, "vkGetCalibratedTimestampsEXT") != NULL,
	       vkGetDeviceProcAddr(d.dev, "vkGetCalibratedTimestampsKHR") != NULL);
	record_submit(&d, n);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

// statsquery: the program's own pipeline statistics query, between a
// label's begin and end, around another label.
static void statsquery(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	f2.features.pipelineStatisticsQuery = VK_TRUE;
	device d = make_device_with(&i, NULL, 0, &f2);
	VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
				    .queryCount = 1, .pipelineStatistics = VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT};
	VkQueryPool qp;
	CHECK(vkCreateQueryPool(d.dev, &qi, NULL, &qp));
	uint64_t total = 0;
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		vkCmdResetQueryPool(d.cmd, qp, 0, 1);
		label(&d, "outer");
		vkCmdBeginQuery(d.cmd, qp, 0, 0);
		label(&d, "inner");
		d.end(d.cmd);
		vkCmdEndQuery(d.cmd, qp, 0);
		d.end(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
		uint64_t v = 0;
		CHECK(vkGetQueryPoolResults(d.dev, qp, 0, 1, sizeof v, &v, sizeof v, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
		total += v;
	}
	printf("compute shader invocations %llu\n", (unsigned long long)total);
	vkDestroyQueryPool(d.dev, qp, NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

#define MT 16

typedef struct {
	device *d;
	pthread_mutex_t *mu;
	int n;
} mt_arg;

static void *mt_thread(void *p) {
	mt_arg *a = p;
	device d = *a->d; // the device and queue shared; a pool, buffer and fence its own
	VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
	CHECK(vkCreateCommandPool(d.dev, &pci, NULL, &d.pool));
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d.pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
	CHECK(vkAllocateCommandBuffers(d.dev, &ai, &d.cmd));
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	CHECK(vkCreateFence(d.dev, &fci, NULL, &d.fence));
	for (int k = 0; k < a->n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		label(&d, "outer");
		label(&d, "inner");
		d.end(d.cmd);
		d.end(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d.cmd};
		pthread_mutex_lock(a->mu);
		VkResult r = vkQueueSubmit(d.q, 1, &si, d.fence);
		pthread_mutex_unlock(a->mu);
		CHECK(r);
		CHECK(vkWaitForFences(d.dev, 1, &d.fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(d.dev, 1, &d.fence));
	}
	vkDestroyFence(d.dev, d.fence, NULL);
	vkFreeCommandBuffers(d.dev, d.pool, 1, &d.cmd);
	vkDestroyCommandPool(d.dev, d.pool, NULL);
	return NULL;
}

static void mt(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	mt_arg a = {&d, &mu, n};
	pthread_t t[MT];
	for (int k = 0; k < MT; k++)
		pthread_create(&t[k], NULL, mt_thread, &a);
	for (int k = 0; k < MT; k++)
		pthread_join(t[k], NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

static void names(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	device d = make_device(&i);
	char name[32];
	for (int k = 0; k < n; k += 100) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		for (int j = k; j < k + 100 && j < n; j++) {
			snprintf(name, sizeof name, "label %d", j);
			label(&d, name);
			d.end(d.cmd);
		}
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
	}
	VkRenderPass rp;
	VkFramebuffer fb;
	VkPipelineLayout layout;
	VkShaderModule mod;
	VkPipeline p = pipeline(&d, &rp, &fb, &layout, &mod);
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	CHECK(vkBeginCommandBuffer(d.cmd, &bi));
	VkRenderPassBeginInfo rbi = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = rp, .framebuffer = fb,
				     .renderArea = {{0, 0}, {16, 16}}};
	vkCmdBeginRenderPass(d.cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
	vkCmdEndRenderPass(d.cmd);
	CHECK(vkEndCommandBuffer(d.cmd));
	submit_wait(&d, &d.cmd, 1);
	vkDestroyPipeline(d.dev, p, NULL);
	vkDestroyPipelineLayout(d.dev, layout, NULL);
	vkDestroyShaderModule(d.dev, mod, NULL);
	vkDestroyFramebuffer(d.dev, fb, NULL);
	vkDestroyRenderPass(d.dev, rp, NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

static void multidraw(int n) {
	instance i = make_instance(VK_API_VERSION_1_3);
	if (!has_device_ext(i.pd, VK_EXT_MULTI_DRAW_EXTENSION_NAME)) {
		fprintf(stderr, "shapes: the device lacks %s\n", VK_EXT_MULTI_DRAW_EXTENSION_NAME);
		exit(4);
	}
	const char *ext[] = {VK_EXT_MULTI_DRAW_EXTENSION_NAME};
	VkPhysicalDeviceMultiDrawFeaturesEXT md = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTI_DRAW_FEATURES_EXT, .multiDraw = VK_TRUE};
	device d = make_device_with(&i, ext, 1, &md);
	PFN_vkCmdDrawMultiEXT draw_multi = (PFN_vkCmdDrawMultiEXT)vkGetDeviceProcAddr(d.dev, "vkCmdDrawMultiEXT");
	VkRenderPass rp;
	VkFramebuffer fb;
	VkPipelineLayout layout;
	VkShaderModule mod;
	VkPipeline p = pipeline(&d, &rp, &fb, &layout, &mod);
	VkMultiDrawInfoEXT draws[3] = {{0, 3}, {3, 3}, {6, 3}};
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		VkRenderPassBeginInfo rbi = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = rp, .framebuffer = fb,
					     .renderArea = {{0, 0}, {16, 16}}};
		vkCmdBeginRenderPass(d.cmd, &rbi, VK_SUBPASS_CONTENTS_INLINE);
		vkCmdBindPipeline(d.cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, p);
		draw_multi(d.cmd, 3, draws, 1, 0, sizeof(VkMultiDrawInfoEXT));
		vkCmdEndRenderPass(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
	}
	vkDeviceWaitIdle(d.dev);
	vkDestroyPipeline(d.dev, p, NULL);
	vkDestroyPipelineLayout(d.dev, layout, NULL);
	vkDestroyShaderModule(d.dev, mod, NULL);
	vkDestroyFramebuffer(d.dev, fb, NULL);
	vkDestroyRenderPass(d.dev, rp, NULL);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: shapes threads|unenabled|many|leak|reset|mt|names|deep|continue|procaddr|statsquery|multidraw N\n");
		return 2;
	}
	report_faults();
	int n = atoi(argv[2]);
	if (strcmp(argv[1], "threads") == 0)
		threads(n);
	else if (strcmp(argv[1], "unenabled") == 0)
		unenabled(n);
	else if (strcmp(argv[1], "many") == 0)
		many(n);
	else if (strcmp(argv[1], "leak") == 0)
		leak(n);
	else if (strcmp(argv[1], "reset") == 0)
		reset(n);
	else if (strcmp(argv[1], "mt") == 0)
		mt(n);
	else if (strcmp(argv[1], "names") == 0)
		names(n);
	else if (strcmp(argv[1], "deep") == 0)
		deep(n);
	else if (strcmp(argv[1], "continue") == 0)
		cont(n);
	else if (strcmp(argv[1], "procaddr") == 0)
		procaddr(n);
	else if (strcmp(argv[1], "statsquery") == 0)
		statsquery(n);
	else if (strcmp(argv[1], "multidraw") == 0)
		multidraw(n);
	else {
		fprintf(stderr, "shapes: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("ok\n");
	return 0;
}
