// Render passes, pipelines and the commands of a simple render loop, built
// and recorded in C so that the driver reads only C memory or pointer-free Go
// memory pinned for the call. vulkan-go's own marshalling frees its C copies
// of slices from finalizers that can run while the driver reads them.
//
// The flat structs below are Vulkan's own layouts where Vulkan's have no
// pointers (they are copied as they are); the others are descriptions the C
// side turns into Vulkan's create infos.
#ifndef FSVK_RENDER_H
#define FSVK_RENDER_H

#include "fsvk.h"

typedef uint64_t fsVkHandle; // any non-dispatchable handle

#define FS_MAX_ATTACHMENTS 8
#define FS_MAX_DEPENDENCIES 8
#define FS_MAX_PUSH_RANGES 8
#define FS_MAX_VERTEX_BINDINGS 8
#define FS_MAX_VERTEX_ATTRIBUTES 16

// VkAttachmentDescription.
typedef struct {
	uint32_t flags, format, samples, loadOp, storeOp, stencilLoadOp, stencilStoreOp, initialLayout, finalLayout;
} fsAttachmentDescription;

// VkAttachmentReference.
typedef struct {
	uint32_t attachment, layout;
} fsAttachmentReference;

// VkSubpassDependency.
typedef struct {
	uint32_t srcSubpass, dstSubpass, srcStageMask, dstStageMask, srcAccessMask, dstAccessMask, dependencyFlags;
} fsSubpassDependency;

// VkPushConstantRange.
typedef struct {
	uint32_t stageFlags, offset, size;
} fsPushConstantRange;

// VkVertexInputBindingDescription.
typedef struct {
	uint32_t binding, stride, inputRate;
} fsVertexBinding;

// VkVertexInputAttributeDescription.
typedef struct {
	uint32_t location, binding, format, offset;
} fsVertexAttribute;

// VkPipelineColorBlendAttachmentState.
typedef struct {
	uint32_t blendEnable, srcColorBlendFactor, dstColorBlendFactor, colorBlendOp;
	uint32_t srcAlphaBlendFactor, dstAlphaBlendFactor, alphaBlendOp, colorWriteMask;
} fsBlendAttachment;

// One render pass with one graphics subpass.
typedef struct {
	uint32_t attachmentCount;
	fsAttachmentDescription attachments[FS_MAX_ATTACHMENTS];
	uint32_t colorCount;
	fsAttachmentReference colors[FS_MAX_ATTACHMENTS];
	uint32_t dependencyCount;
	fsSubpassDependency dependencies[FS_MAX_DEPENDENCIES];
} fsRenderPassDesc;

// A graphics pipeline: a vertex and a fragment shader ("main"), a fixed
// viewport and scissor of width x height, no depth, stencil or dynamic state.
typedef struct {
	fsVkHandle vertex, fragment, layout, renderPass;
	uint32_t subpass;
	uint32_t bindingCount;
	fsVertexBinding bindings[FS_MAX_VERTEX_BINDINGS];
	uint32_t attributeCount;
	fsVertexAttribute attributes[FS_MAX_VERTEX_ATTRIBUTES];
	uint32_t topology;
	uint32_t width, height;
	uint32_t polygonMode, cullMode, frontFace;
	uint32_t samples;
	uint32_t blendCount;
	fsBlendAttachment blend[FS_MAX_ATTACHMENTS];
} fsPipelineDesc;

// Procs a fsRender* call needs: create and destroy, or the command.
fsVkResult fs_create_render_pass(fsPFN create, fsVkDevice dev, const fsRenderPassDesc *d, fsVkHandle *out);
fsVkResult fs_create_shader_module(fsPFN create, fsVkDevice dev, const uint32_t *code, size_t size, fsVkHandle *out);
fsVkResult fs_create_pipeline_layout(fsPFN create, fsVkDevice dev, const fsPushConstantRange *ranges, uint32_t n,
	fsVkHandle *out);
fsVkResult fs_create_framebuffer(fsPFN create, fsVkDevice dev, fsVkHandle rp, const fsVkHandle *views, uint32_t n,
	uint32_t w, uint32_t h, fsVkHandle *out);
fsVkResult fs_create_graphics_pipeline(fsPFN create, fsVkDevice dev, const fsPipelineDesc *d, fsVkHandle *out);
fsVkResult fs_create_compute_pipeline(fsPFN create, fsVkDevice dev, fsVkHandle module, fsVkHandle layout, fsVkHandle *out);

// Commands: everything by value.
void fs_cmd_begin_render_pass(fsPFN begin, fsVkCommandBuffer cmd, fsVkHandle rp, fsVkHandle fb, uint32_t w, uint32_t h,
	float r, float g, float b, float a);
void fs_cmd_copy_image_to_buffer(fsPFN copy, fsVkCommandBuffer cmd, fsVkHandle image, uint32_t layout, fsVkHandle buf,
	uint32_t aspect, uint32_t w, uint32_t h);
void fs_cmd_buffer_barrier(fsPFN barrier, fsVkCommandBuffer cmd, uint32_t srcStage, uint32_t dstStage,
	uint32_t srcAccess, uint32_t dstAccess, fsVkHandle buf);

#endif
