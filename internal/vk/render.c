#include "render.h"

#include <string.h>

// Vulkan's layouts of the structs that hold pointers; sType values from the
// Vulkan registry.

typedef struct {
	uint32_t flags, pipelineBindPoint;
	uint32_t inputAttachmentCount;
	const fsAttachmentReference *pInputAttachments;
	uint32_t colorAttachmentCount;
	const fsAttachmentReference *pColorAttachments;
	const fsAttachmentReference *pResolveAttachments;
	const fsAttachmentReference *pDepthStencilAttachment;
	uint32_t preserveAttachmentCount;
	const uint32_t *pPreserveAttachments;
} fsSubpassDescription;

typedef struct {
	int32_t sType; // 38
	const void *pNext;
	uint32_t flags;
	uint32_t attachmentCount;
	const fsAttachmentDescription *pAttachments;
	uint32_t subpassCount;
	const fsSubpassDescription *pSubpasses;
	uint32_t dependencyCount;
	const fsSubpassDependency *pDependencies;
} fsRenderPassCreateInfo;

typedef fsVkResult (*fsPFN_Create)(fsVkDevice, const void *, const void *, fsVkHandle *);

fsVkResult fs_create_render_pass(fsPFN create, fsVkDevice dev, const fsRenderPassDesc *d, fsVkHandle *out) {
	if (d->attachmentCount > FS_MAX_ATTACHMENTS || d->colorCount > FS_MAX_ATTACHMENTS ||
		d->dependencyCount > FS_MAX_DEPENDENCIES) {
		return -3; // VK_ERROR_INITIALIZATION_FAILED
	}
	fsSubpassDescription sub;
	memset(&sub, 0, sizeof sub);
	sub.pipelineBindPoint = 0; // GRAPHICS
	sub.colorAttachmentCount = d->colorCount;
	sub.pColorAttachments = d->colorCount ? d->colors : NULL;
	fsRenderPassCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 38;
	ci.attachmentCount = d->attachmentCount;
	ci.pAttachments = d->attachmentCount ? d->attachments : NULL;
	ci.subpassCount = 1;
	ci.pSubpasses = &sub;
	ci.dependencyCount = d->dependencyCount;
	ci.pDependencies = d->dependencyCount ? d->dependencies : NULL;
	return ((fsPFN_Create)create)(dev, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 16
	const void *pNext;
	uint32_t flags;
	size_t codeSize;
	const uint32_t *pCode;
} fsShaderModuleCreateInfo;

fsVkResult fs_create_shader_module(fsPFN create, fsVkDevice dev, const uint32_t *code, size_t size, fsVkHandle *out) {
	fsShaderModuleCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 16;
	ci.codeSize = size;
	ci.pCode = code;
	return ((fsPFN_Create)create)(dev, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 30
	const void *pNext;
	uint32_t flags;
	uint32_t setLayoutCount;
	const fsVkHandle *pSetLayouts;
	uint32_t pushConstantRangeCount;
	const fsPushConstantRange *pPushConstantRanges;
} fsPipelineLayoutCreateInfo;

fsVkResult fs_create_pipeline_layout(fsPFN create, fsVkDevice dev, const fsPushConstantRange *ranges, uint32_t n,
	fsVkHandle *out) {
	fsPipelineLayoutCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 30;
	ci.pushConstantRangeCount = n;
	ci.pPushConstantRanges = n ? ranges : NULL;
	return ((fsPFN_Create)create)(dev, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 37
	const void *pNext;
	uint32_t flags;
	fsVkHandle renderPass;
	uint32_t attachmentCount;
	const fsVkHandle *pAttachments;
	uint32_t width, height, layers;
} fsFramebufferCreateInfo;

fsVkResult fs_create_framebuffer(fsPFN create, fsVkDevice dev, fsVkHandle rp, const fsVkHandle *views, uint32_t n,
	uint32_t w, uint32_t h, fsVkHandle *out) {
	fsFramebufferCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 37;
	ci.renderPass = rp;
	ci.attachmentCount = n;
	ci.pAttachments = n ? views : NULL;
	ci.width = w;
	ci.height = h;
	ci.layers = 1;
	return ((fsPFN_Create)create)(dev, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 18
	const void *pNext;
	uint32_t flags;
	uint32_t stage;
	fsVkHandle module;
	const char *pName;
	const void *pSpecializationInfo;
} fsShaderStage;

typedef struct {
	int32_t sType; // 19
	const void *pNext;
	uint32_t flags;
	uint32_t bindingCount;
	const fsVertexBinding *pBindings;
	uint32_t attributeCount;
	const fsVertexAttribute *pAttributes;
} fsVertexInputState;

typedef struct {
	int32_t sType; // 20
	const void *pNext;
	uint32_t flags;
	uint32_t topology;
	uint32_t primitiveRestartEnable;
} fsInputAssemblyState;

typedef struct {
	float x, y, width, height, minDepth, maxDepth;
} fsViewport;

typedef struct {
	int32_t x, y;
	uint32_t width, height;
} fsRect2D;

typedef struct {
	int32_t sType; // 22
	const void *pNext;
	uint32_t flags;
	uint32_t viewportCount;
	const fsViewport *pViewports;
	uint32_t scissorCount;
	const fsRect2D *pScissors;
} fsViewportState;

typedef struct {
	int32_t sType; // 23
	const void *pNext;
	uint32_t flags;
	uint32_t depthClampEnable, rasterizerDiscardEnable, polygonMode, cullMode, frontFace, depthBiasEnable;
	float depthBiasConstantFactor, depthBiasClamp, depthBiasSlopeFactor, lineWidth;
} fsRasterizationState;

typedef struct {
	int32_t sType; // 24
	const void *pNext;
	uint32_t flags;
	uint32_t rasterizationSamples, sampleShadingEnable;
	float minSampleShading;
	const uint32_t *pSampleMask;
	uint32_t alphaToCoverageEnable, alphaToOneEnable;
} fsMultisampleState;

typedef struct {
	int32_t sType; // 26
	const void *pNext;
	uint32_t flags;
	uint32_t logicOpEnable, logicOp;
	uint32_t attachmentCount;
	const fsBlendAttachment *pAttachments;
	float blendConstants[4];
} fsColorBlendState;

typedef struct {
	int32_t sType; // 28
	const void *pNext;
	uint32_t flags;
	uint32_t stageCount;
	const fsShaderStage *pStages;
	const fsVertexInputState *pVertexInputState;
	const fsInputAssemblyState *pInputAssemblyState;
	const void *pTessellationState;
	const fsViewportState *pViewportState;
	const fsRasterizationState *pRasterizationState;
	const fsMultisampleState *pMultisampleState;
	const void *pDepthStencilState;
	const fsColorBlendState *pColorBlendState;
	const void *pDynamicState;
	fsVkHandle layout;
	fsVkHandle renderPass;
	uint32_t subpass;
	fsVkHandle basePipelineHandle;
	int32_t basePipelineIndex;
} fsGraphicsPipelineCreateInfo;

typedef fsVkResult (*fsPFN_CreateGraphicsPipelines)(fsVkDevice, fsVkHandle, uint32_t,
	const fsGraphicsPipelineCreateInfo *, const void *, fsVkHandle *);

fsVkResult fs_create_graphics_pipeline(fsPFN create, fsVkDevice dev, const fsPipelineDesc *d, fsVkHandle *out) {
	if (d->bindingCount > FS_MAX_VERTEX_BINDINGS || d->attributeCount > FS_MAX_VERTEX_ATTRIBUTES ||
		d->blendCount > FS_MAX_ATTACHMENTS) {
		return -3; // VK_ERROR_INITIALIZATION_FAILED
	}
	fsShaderStage stages[2];
	memset(stages, 0, sizeof stages);
	stages[0].sType = 18;
	stages[0].stage = 0x1; // VERTEX
	stages[0].module = d->vertex;
	stages[0].pName = "main";
	stages[1].sType = 18;
	stages[1].stage = 0x10; // FRAGMENT
	stages[1].module = d->fragment;
	stages[1].pName = "main";

	fsVertexInputState vi;
	memset(&vi, 0, sizeof vi);
	vi.sType = 19;
	vi.bindingCount = d->bindingCount;
	vi.pBindings = d->bindingCount ? d->bindings : NULL;
	vi.attributeCount = d->attributeCount;
	vi.pAttributes = d->attributeCount ? d->attributes : NULL;

	fsInputAssemblyState ia;
	memset(&ia, 0, sizeof ia);
	ia.sType = 20;
	ia.topology = d->topology;

	fsViewport vp = {0, 0, (float)d->width, (float)d->height, 0, 1};
	fsRect2D scissor = {0, 0, d->width, d->height};
	fsViewportState vs;
	memset(&vs, 0, sizeof vs);
	vs.sType = 22;
	vs.viewportCount = 1;
	vs.pViewports = &vp;
	vs.scissorCount = 1;
	vs.pScissors = &scissor;

	fsRasterizationState rs;
	memset(&rs, 0, sizeof rs);
	rs.sType = 23;
	rs.polygonMode = d->polygonMode;
	rs.cullMode = d->cullMode;
	rs.frontFace = d->frontFace;
	rs.lineWidth = 1.0f;

	fsMultisampleState ms;
	memset(&ms, 0, sizeof ms);
	ms.sType = 24;
	ms.rasterizationSamples = d->samples;

	fsColorBlendState cb;
	memset(&cb, 0, sizeof cb);
	cb.sType = 26;
	cb.attachmentCount = d->blendCount;
	cb.pAttachments = d->blendCount ? d->blend : NULL;

	fsGraphicsPipelineCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 28;
	ci.stageCount = 2;
	ci.pStages = stages;
	ci.pVertexInputState = &vi;
	ci.pInputAssemblyState = &ia;
	ci.pViewportState = &vs;
	ci.pRasterizationState = &rs;
	ci.pMultisampleState = &ms;
	ci.pColorBlendState = &cb;
	ci.layout = d->layout;
	ci.renderPass = d->renderPass;
	ci.subpass = d->subpass;
	ci.basePipelineIndex = -1;
	return ((fsPFN_CreateGraphicsPipelines)create)(dev, 0, 1, &ci, NULL, out);
}

typedef struct {
	int32_t sType; // 43
	const void *pNext;
	fsVkHandle renderPass;
	fsVkHandle framebuffer;
	fsRect2D renderArea;
	uint32_t clearValueCount;
	const float (*pClearValues)[4]; // VkClearValue: 16 bytes, here the float color
} fsRenderPassBeginInfo;

typedef void (*fsPFN_CmdBeginRenderPass)(fsVkCommandBuffer, const fsRenderPassBeginInfo *, uint32_t);

void fs_cmd_begin_render_pass(fsPFN begin, fsVkCommandBuffer cmd, fsVkHandle rp, fsVkHandle fb, uint32_t w, uint32_t h,
	float r, float g, float b, float a) {
	float clear[1][4] = {{r, g, b, a}};
	fsRenderPassBeginInfo bi;
	memset(&bi, 0, sizeof bi);
	bi.sType = 43;
	bi.renderPass = rp;
	bi.framebuffer = fb;
	bi.renderArea.width = w;
	bi.renderArea.height = h;
	bi.clearValueCount = 1;
	bi.pClearValues = clear;
	((fsPFN_CmdBeginRenderPass)begin)(cmd, &bi, 0); // VK_SUBPASS_CONTENTS_INLINE
}

typedef struct {
	uint64_t bufferOffset;
	uint32_t bufferRowLength, bufferImageHeight;
	uint32_t aspectMask, mipLevel, baseArrayLayer, layerCount;
	int32_t x, y, z;
	uint32_t width, height, depth;
} fsBufferImageCopy;

typedef void (*fsPFN_CmdCopyImageToBuffer)(fsVkCommandBuffer, fsVkHandle, uint32_t, fsVkHandle, uint32_t,
	const fsBufferImageCopy *);

void fs_cmd_copy_image_to_buffer(fsPFN copy, fsVkCommandBuffer cmd, fsVkHandle image, uint32_t layout, fsVkHandle buf,
	uint32_t aspect, uint32_t w, uint32_t h) {
	fsBufferImageCopy region;
	memset(&region, 0, sizeof region);
	region.aspectMask = aspect;
	region.layerCount = 1;
	region.width = w;
	region.height = h;
	region.depth = 1;
	((fsPFN_CmdCopyImageToBuffer)copy)(cmd, image, layout, buf, 1, &region);
}

typedef struct {
	int32_t sType; // 44
	const void *pNext;
	uint32_t srcAccessMask, dstAccessMask;
	uint32_t srcQueueFamilyIndex, dstQueueFamilyIndex;
	fsVkHandle buffer;
	uint64_t offset, size;
} fsBufferMemoryBarrier;

typedef void (*fsPFN_CmdBufferBarrier)(fsVkCommandBuffer, uint32_t, uint32_t, uint32_t, uint32_t, const void *,
	uint32_t, const fsBufferMemoryBarrier *, uint32_t, const void *);

void fs_cmd_buffer_barrier(fsPFN barrier, fsVkCommandBuffer cmd, uint32_t srcStage, uint32_t dstStage,
	uint32_t srcAccess, uint32_t dstAccess, fsVkHandle buf) {
	fsBufferMemoryBarrier b;
	memset(&b, 0, sizeof b);
	b.sType = 44;
	b.srcAccessMask = srcAccess;
	b.dstAccessMask = dstAccess;
	b.srcQueueFamilyIndex = ~0u; // VK_QUEUE_FAMILY_IGNORED
	b.dstQueueFamilyIndex = ~0u;
	b.buffer = buf;
	b.size = ~0ull; // VK_WHOLE_SIZE
	((fsPFN_CmdBufferBarrier)barrier)(cmd, srcStage, dstStage, 0, 0, NULL, 1, &b, 0, NULL);
}

// The flat structs are Vulkan's layouts, passed to the driver as they are.
_Static_assert(sizeof(fsAttachmentDescription) == 36, "VkAttachmentDescription");
_Static_assert(sizeof(fsSubpassDependency) == 28, "VkSubpassDependency");
_Static_assert(sizeof(fsBlendAttachment) == 32, "VkPipelineColorBlendAttachmentState");
_Static_assert(sizeof(fsBufferImageCopy) == 56, "VkBufferImageCopy");
_Static_assert(sizeof(fsSubpassDescription) == 72, "VkSubpassDescription");
_Static_assert(sizeof(fsGraphicsPipelineCreateInfo) == 144, "VkGraphicsPipelineCreateInfo");
_Static_assert(sizeof(fsRenderPassBeginInfo) == 64, "VkRenderPassBeginInfo");
_Static_assert(sizeof(fsBufferMemoryBarrier) == 56, "VkBufferMemoryBarrier");
_Static_assert(sizeof(fsRasterizationState) == 64, "VkPipelineRasterizationStateCreateInfo");
_Static_assert(sizeof(fsMultisampleState) == 48, "VkPipelineMultisampleStateCreateInfo");
_Static_assert(sizeof(fsColorBlendState) == 56, "VkPipelineColorBlendStateCreateInfo");

typedef struct {
	int32_t sType; // 29 VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
	const void *pNext;
	uint32_t flags;
	fsShaderStage stage;
	fsVkHandle layout;
	fsVkHandle basePipelineHandle;
	int32_t basePipelineIndex;
} fsComputePipelineCreateInfo;

typedef fsVkResult (*fsPFN_CreateComputePipelines)(fsVkDevice, fsVkHandle, uint32_t,
	const fsComputePipelineCreateInfo *, const void *, fsVkHandle *);

fsVkResult fs_create_compute_pipeline(fsPFN create, fsVkDevice dev, fsVkHandle module, fsVkHandle layout, fsVkHandle *out) {
	fsComputePipelineCreateInfo ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 29;
	ci.stage.sType = 18;
	ci.stage.stage = 0x20; // COMPUTE
	ci.stage.module = module;
	ci.stage.pName = "main";
	ci.layout = layout;
	ci.basePipelineIndex = -1;
	return ((fsPFN_CreateComputePipelines)create)(dev, 0, 1, &ci, NULL, out);
}
