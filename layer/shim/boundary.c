// VK_EXT_frame_boundary: a program marks the last submission of each of
// its frames (a VkFrameBoundaryEXT with the frame-end bit in a
// submission's or a present's pNext chain) where presents do not say
// what its frames are: it renders offscreen, or presents more than once
// a frame. The layer offers the extension where the device below it does
// not (it is a tools' extension: drivers need not know it), and takes
// what the program gives of it out of what it passes down, so that the
// layers and driver below see nothing they do not know.
//
// Debian's Vulkan headers (1.3.239) predate the extension: its numbers
// are the registry's.
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define FB_NAME "VK_EXT_frame_boundary"
#define FB_FEATURES ((VkStructureType)1000375000) // VkPhysicalDeviceFrameBoundaryFeaturesEXT
#define FB_INFO ((VkStructureType)1000375001)     // VkFrameBoundaryEXT
#define FB_FRAME_END 1u                            // VK_FRAME_BOUNDARY_FRAME_END_BIT_EXT

// The leading members of VkFrameBoundaryEXT and of the features struct.
typedef struct {
	VkStructureType sType;
	const void *pNext;
	VkFlags flags;
} fb_info;

typedef struct {
	VkStructureType sType;
	void *pNext;
	VkBool32 frameBoundary;
} fb_features;

// driver_offers reports whether the device below offers the extension.
static int driver_offers(fs_instance *inst, VkPhysicalDevice pd) {
	uint32_t n = 0;
	int found = 0;
	if (inst->EnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
		return 0;
	VkExtensionProperties *e = calloc(n, sizeof *e);
	if (e && inst->EnumerateDeviceExtensionProperties(pd, NULL, &n, e) >= 0)
		for (uint32_t i = 0; i < n; i++)
			found |= strcmp(e[i].extensionName, FB_NAME) == 0;
	free(e);
	return found;
}

static const VkExtensionProperties offered = {FB_NAME, 1};

VKAPI_ATTR VkResult VKAPI_CALL fs_EnumerateDeviceExtensionProperties(VkPhysicalDevice pd, const char *layer, uint32_t *n,
								      VkExtensionProperties *out) {
	fs_instance *inst = fs_instance_of(pd);
	if (layer && strcmp(layer, FS_LAYER_NAME) == 0) {
		if (!out) {
			*n = 1;
			return VK_SUCCESS;
		}
		if (*n == 0)
			return VK_INCOMPLETE;
		out[0] = offered;
		*n = 1;
		return VK_SUCCESS;
	}
	if (!inst)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (layer || driver_offers(inst, pd))
		return inst->EnumerateDeviceExtensionProperties(pd, layer, n, out);
	uint32_t m = 0;
	VkResult r = inst->EnumerateDeviceExtensionProperties(pd, NULL, &m, NULL);
	if (r != VK_SUCCESS)
		return r;
	if (!out) {
		*n = m + 1;
		return VK_SUCCESS;
	}
	VkExtensionProperties *all = calloc(m + 1, sizeof *all);
	if (!all)
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	r = inst->EnumerateDeviceExtensionProperties(pd, NULL, &m, all);
	if (r < 0) {
		free(all);
		return r;
	}
	all[m++] = offered;
	uint32_t k = *n < m ? *n : m;
	memcpy(out, all, k * sizeof *all);
	free(all);
	*n = k;
	return k < m ? VK_INCOMPLETE : VK_SUCCESS;
}

// A link of a pNext chain taken out for a call into the layers below,
// to be put back after it.
typedef struct {
	const void **at;
	const void *was;
} unlinked;

// unlink takes the first struct of type t out of the chain *head points
// to. The links it changes may be the program's: relink puts them back.
static unlinked unlink_type(const void **head, VkStructureType t) {
	for (const void **at = head; *at; at = (const void **)&((VkBaseInStructure *)*at)->pNext) {
		const VkBaseInStructure *s = *at;
		if (s->sType == t) {
			unlinked u = {at, *at};
			*at = s->pNext;
			return u;
		}
	}
	return (unlinked){0};
}

static void relink(unlinked u) {
	if (u.at)
		*u.at = u.was;
}

static VKAPI_ATTR void VKAPI_CALL features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f) {
	fs_instance *inst = fs_instance_of(pd);
	if (!inst || !inst->GetPhysicalDeviceFeatures2)
		return;
	if (driver_offers(inst, pd)) {
		inst->GetPhysicalDeviceFeatures2(pd, f);
		return;
	}
	unlinked u = unlink_type((const void **)&f->pNext, FB_FEATURES);
	inst->GetPhysicalDeviceFeatures2(pd, f);
	relink(u);
	if (u.at)
		((fb_features *)u.was)->frameBoundary = VK_TRUE;
}

VKAPI_ATTR void VKAPI_CALL fs_GetPhysicalDeviceFeatures2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2 *f) { features2(pd, f); }

// fs_boundary_device_ask takes the extension and its features struct out
// of a device's create info where the device below does not offer it
// (the program's chain is changed until fs_boundary_device_done), and
// reports in *uses whether the program enabled it.
void fs_boundary_device_ask(fs_instance *inst, VkPhysicalDevice pd, VkDeviceCreateInfo *ci, const char **exts, int *uses,
			    fs_boundary_undo *undo) {
	*uses = 0;
	memset(undo, 0, sizeof *undo);
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(exts[i], FB_NAME) == 0)
			*uses = i + 1;
	if (!*uses || driver_offers(inst, pd))
		return;
	uint32_t k = *uses - 1;
	memmove(&exts[k], &exts[k + 1], (ci->enabledExtensionCount - k - 1) * sizeof exts[0]);
	ci->enabledExtensionCount--;
	unlinked u = unlink_type(&ci->pNext, FB_FEATURES);
	undo->at = u.at;
	undo->was = u.was;
	undo->strip = 1;
}

void fs_boundary_device_done(const fs_boundary_undo *undo) { relink((unlinked){undo->at, undo->was}); }

// frame_end reports whether a pNext chain holds a VkFrameBoundaryEXT with
// the frame-end bit.
static int frame_end(const void *chain) {
	for (const VkBaseInStructure *s = chain; s; s = s->pNext)
		if (s->sType == FB_INFO)
			return (((const fb_info *)s)->flags & FB_FRAME_END) != 0;
	return 0;
}

// fs_boundary_submit looks for frame ends in n submissions (s1 of
// vkQueueSubmit, or s2 of vkQueueSubmit2) and, where the device must not
// see them, takes the VkFrameBoundaryEXT out of each chain until
// fs_boundary_restore; the program's arrays are left as they are (copies
// go down). It returns the number of frame ends.
int fs_boundary_submit(fs_device *v, uint32_t n, const VkSubmitInfo **s1, const VkSubmitInfo2 **s2, fs_boundary_call *c) {
	memset(c, 0, sizeof *c);
	if (!v->frame_boundary)
		return 0;
	int ends = 0, any = 0;
	for (uint32_t i = 0; i < n; i++) {
		const void *chain = s1 ? (*s1)[i].pNext : (*s2)[i].pNext;
		ends += frame_end(chain);
		for (const VkBaseInStructure *s = chain; s; s = s->pNext)
			any |= s->sType == FB_INFO;
	}
	if (!any || !v->frame_boundary_strip)
		return ends;
	size_t size = s1 ? sizeof **s1 : sizeof **s2;
	void *copy = malloc(n * size);
	c->links = calloc(n, sizeof *c->links);
	if (!copy || !c->links) {
		free(copy);
		free(c->links);
		c->links = NULL;
		return ends; // passed down as given: the layers below skip what they do not know
	}
	memcpy(copy, s1 ? (const void *)*s1 : (const void *)*s2, n * size);
	for (uint32_t i = 0; i < n; i++) {
		const void **head = s1 ? &((VkSubmitInfo *)copy)[i].pNext : &((VkSubmitInfo2 *)copy)[i].pNext;
		unlinked u = unlink_type(head, FB_INFO);
		// A link in the copy needs no putting back: only the program's.
		if (u.at != head) {
			c->links[i].at = u.at;
			c->links[i].was = u.was;
		}
	}
	c->n = n;
	c->copy = copy;
	if (s1)
		*s1 = copy;
	else
		*s2 = copy;
	return ends;
}

// fs_boundary_present is fs_boundary_submit for a present.
int fs_boundary_present(fs_device *v, const VkPresentInfoKHR **info, VkPresentInfoKHR *copy, fs_boundary_call *c) {
	memset(c, 0, sizeof *c);
	if (!v->frame_boundary)
		return 0;
	int ends = frame_end((*info)->pNext);
	if (!v->frame_boundary_strip)
		return ends;
	*copy = **info;
	unlinked u = unlink_type(&copy->pNext, FB_INFO);
	if (!u.at)
		return ends;
	if (u.at != &copy->pNext) { // the program's link: put back after the call
		c->links = calloc(1, sizeof *c->links);
		if (!c->links) {
			relink(u);
			return ends; // passed down as given
		}
		c->links[0].at = u.at;
		c->links[0].was = u.was;
		c->n = 1;
	}
	*info = copy;
	return ends;
}

void fs_boundary_restore(fs_boundary_call *c) {
	for (uint32_t i = 0; i < c->n; i++)
		relink((unlinked){c->links[i].at, c->links[i].was});
	free(c->links);
	free(c->copy);
}
