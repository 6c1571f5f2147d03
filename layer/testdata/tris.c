// tris.c: a render loop that draws N full-screen triangles a frame into an
// image of its own, for `framescope run -work` (TestWorkUnderLayer): twice
// N, twice the vertices, primitives and fragments of the frame's render
// pass. The shaders are SPIR-V files: a vertex shader that makes a
// full-screen triangle from the vertex index, and a fragment shader with
// 16 bytes of push constants (the demo's load shaders). Each frame is
// labelled "frame" and presented as the end of a frame through
// -frame-every 1.
//
//   tris VERT.spv FRAG.spv N FRAMES
#include "vkprog.h"

static VkShaderModule shader(device *d, const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	static uint32_t code[1 << 16];
	size_t n = fread(code, 1, sizeof code, f);
	fclose(f);
	VkShaderModuleCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n, .pCode = code};
	VkShaderModule m;
	CHECK(vkCreateShaderModule(d->dev, &ci, NULL, &m));
	return m;
}

static VkPipeline pipeline(device *d, target *t, VkPipelineLayout layout, VkShaderModule vs, VkShaderModule fs, uint32_t size) {
	VkPipelineShaderStageCreateInfo st[2] = {
	    {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_VERTEX_BIT, .module = vs, .pName = "main"},
	    {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_FRAGMENT_BIT, .module = fs, .pName = "main"},
	};
	VkPipelineVertexInputStateCreateInfo vi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
	VkPipelineInputAssemblyStateCreateInfo ia = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
						     .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
	VkViewport vp = {0, 0, (float)size, (float)size, 0, 1};
	VkRect2D sc = {{0, 0}, {size, size}};
	VkPipelineViewportStateCreateInfo vps = {.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
						 .viewportCount = 1, .pViewports = &vp, .scissorCount = 1, .pScissors = &sc};
	VkPipelineRasterizationStateCreateInfo rs = {.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
						     .polygonMode = VK_POLYGON_MODE_FILL, .cullMode = VK_CULL_MODE_NONE, .lineWidth = 1};
	VkPipelineMultisampleStateCreateInfo ms = {.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
						   .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT};
	VkPipelineColorBlendAttachmentState ba = {.colorWriteMask = 0xf};
	VkPipelineColorBlendStateCreateInfo cb = {.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
						  .attachmentCount = 1, .pAttachments = &ba};
	VkGraphicsPipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, .stageCount = 2, .pStages = st,
					   .pVertexInputState = &vi, .pInputAssemblyState = &ia, .pViewportState = &vps,
					   .pRasterizationState = &rs, .pMultisampleState = &ms, .pColorBlendState = &cb,
					   .layout = layout, .renderPass = t->rp};
	VkPipeline p;
	CHECK(vkCreateGraphicsPipelines(d->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p));
	return p;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: tris VERT.spv FRAG.spv N FRAMES\n");
		return 2;
	}
	const uint32_t size = 64, n = (uint32_t)atoi(argv[3]);
	const int frames = atoi(argv[4]);
	instance i = make_instance(VK_API_VERSION_1_1);
	device d = make_device(&i);
	target t = make_target(&i, &d, size);
	VkPushConstantRange pr = {VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, 16};
	VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .pushConstantRangeCount = 1,
					 .pPushConstantRanges = &pr};
	VkPipelineLayout layout;
	CHECK(vkCreatePipelineLayout(d.dev, &li, NULL, &layout));
	VkShaderModule vs = shader(&d, argv[1]), fs = shader(&d, argv[2]);
	VkPipeline p = pipeline(&d, &t, layout, vs, fs, size);
	struct {
		float angle;
		uint32_t iterations;
		float seed, pad;
	} push = {0, 1, 0, 0};
	for (int f = 0; f < frames; f++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d.cmd, &bi));
		label(&d, "frame");
		VkClearValue clear = {{{0, 0, 0, 1}}};
		VkRenderPassBeginInfo rb = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = t.rp, .framebuffer = t.fb,
					    .renderArea = {{0, 0}, {size, size}}, .clearValueCount = 1, .pClearValues = &clear};
		vkCmdBeginRenderPass(d.cmd, &rb, VK_SUBPASS_CONTENTS_INLINE);
		vkCmdBindPipeline(d.cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, p);
		push.seed = (float)f;
		vkCmdPushConstants(d.cmd, layout, pr.stageFlags, 0, sizeof push, &push);
		vkCmdDraw(d.cmd, 3 * n, 1, 0, 0);
		vkCmdEndRenderPass(d.cmd);
		d.end(d.cmd);
		CHECK(vkEndCommandBuffer(d.cmd));
		submit_wait(&d, &d.cmd, 1);
	}
	vkDestroyPipeline(d.dev, p, NULL);
	vkDestroyShaderModule(d.dev, vs, NULL);
	vkDestroyShaderModule(d.dev, fs, NULL);
	vkDestroyPipelineLayout(d.dev, layout, NULL);
	destroy_target(&d, &t);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	return 0;
}
