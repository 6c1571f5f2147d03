// Zones for each draw and dispatch, when FRAMESCOPE_DRAWS=1 (framescope
// run -draws): off by default, as a zone costs more than a small draw.
// Each hook begins the zone, records the command, and ends the zone.
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define AROUND(kind, f, args)                 \
	do {                                  \
		CMD(cmd);                          \
		fs_zone_begin(fc, cmd, NULL, kind); \
		DOWN(v, f, args);                  \
		fs_zone_end(fc, cmd, kind);         \
	} while (0)

static VKAPI_ATTR void VKAPI_CALL fs_CmdDraw(VkCommandBuffer cmd, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
	AROUND(FS_ZONE_DRAW, CmdDraw, (cmd, a, b, c, d));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndexed(VkCommandBuffer cmd, uint32_t a, uint32_t b, uint32_t c, int32_t d, uint32_t e) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndexed, (cmd, a, b, c, d, e));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndirect(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndirect, (cmd, b, o, n, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndexedIndirect(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndexedIndirect, (cmd, b, o, n, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndirectCount(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, VkBuffer cb, VkDeviceSize co,
							     uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndirectCount, (cmd, b, o, cb, co, n, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndexedIndirectCount(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, VkBuffer cb,
								    VkDeviceSize co, uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndexedIndirectCount, (cmd, b, o, cb, co, n, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDispatch(VkCommandBuffer cmd, uint32_t x, uint32_t y, uint32_t z) {
	AROUND(FS_ZONE_DISPATCH, CmdDispatch, (cmd, x, y, z));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDispatchIndirect(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o) {
	AROUND(FS_ZONE_DISPATCH, CmdDispatchIndirect, (cmd, b, o));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDispatchBase(VkCommandBuffer cmd, uint32_t bx, uint32_t by, uint32_t bz, uint32_t x, uint32_t y,
						     uint32_t z) {
	AROUND(FS_ZONE_DISPATCH, CmdDispatchBase, (cmd, bx, by, bz, x, y, z));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawMultiEXT(VkCommandBuffer cmd, uint32_t n, const VkMultiDrawInfoEXT *d, uint32_t inst,
						      uint32_t first, uint32_t stride) {
	AROUND(FS_ZONE_DRAW, CmdDrawMultiEXT, (cmd, n, d, inst, first, stride));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawMultiIndexedEXT(VkCommandBuffer cmd, uint32_t n, const VkMultiDrawIndexedInfoEXT *d,
							     uint32_t inst, uint32_t first, uint32_t stride, const int32_t *off) {
	AROUND(FS_ZONE_DRAW, CmdDrawMultiIndexedEXT, (cmd, n, d, inst, first, stride, off));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawIndirectByteCountEXT(VkCommandBuffer cmd, uint32_t inst, uint32_t first, VkBuffer b,
								  VkDeviceSize bo, uint32_t co, uint32_t stride) {
	AROUND(FS_ZONE_DRAW, CmdDrawIndirectByteCountEXT, (cmd, inst, first, b, bo, co, stride));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawMeshTasksEXT(VkCommandBuffer cmd, uint32_t x, uint32_t y, uint32_t z) {
	AROUND(FS_ZONE_DRAW, CmdDrawMeshTasksEXT, (cmd, x, y, z));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawMeshTasksIndirectEXT(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawMeshTasksIndirectEXT, (cmd, b, o, n, s));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdDrawMeshTasksIndirectCountEXT(VkCommandBuffer cmd, VkBuffer b, VkDeviceSize o, VkBuffer cb,
								      VkDeviceSize co, uint32_t n, uint32_t s) {
	AROUND(FS_ZONE_DRAW, CmdDrawMeshTasksIndirectCountEXT, (cmd, b, o, cb, co, n, s));
}

// fs_draw_hook returns the hook of a draw or dispatch command, when the
// layer times them.
PFN_vkVoidFunction fs_draw_hook(const char *name) {
	static int on = -1;
	if (on < 0) {
		const char *e = getenv("FRAMESCOPE_DRAWS");
		on = e && strcmp(e, "1") == 0;
	}
	if (!on)
		return NULL;
	static const fs_hook hooks[] = {
#define H FS_HOOK
	    H("vkCmdDraw", fs_CmdDraw),
	    H("vkCmdDrawIndexed", fs_CmdDrawIndexed),
	    H("vkCmdDrawIndirect", fs_CmdDrawIndirect),
	    H("vkCmdDrawIndexedIndirect", fs_CmdDrawIndexedIndirect),
	    H("vkCmdDrawIndirectCount", fs_CmdDrawIndirectCount),
	    H("vkCmdDrawIndirectCountKHR", fs_CmdDrawIndirectCount),
	    H("vkCmdDrawIndexedIndirectCount", fs_CmdDrawIndexedIndirectCount),
	    H("vkCmdDrawIndexedIndirectCountKHR", fs_CmdDrawIndexedIndirectCount),
	    H("vkCmdDrawMultiEXT", fs_CmdDrawMultiEXT),
	    H("vkCmdDrawMultiIndexedEXT", fs_CmdDrawMultiIndexedEXT),
	    H("vkCmdDrawIndirectByteCountEXT", fs_CmdDrawIndirectByteCountEXT),
	    H("vkCmdDrawMeshTasksEXT", fs_CmdDrawMeshTasksEXT),
	    H("vkCmdDrawMeshTasksIndirectEXT", fs_CmdDrawMeshTasksIndirectEXT),
	    H("vkCmdDrawMeshTasksIndirectCountEXT", fs_CmdDrawMeshTasksIndirectCountEXT),
	    H("vkCmdDispatch", fs_CmdDispatch),
	    H("vkCmdDispatchIndirect", fs_CmdDispatchIndirect),
	    H("vkCmdDispatchBase", fs_CmdDispatchBase),
	    H("vkCmdDispatchBaseKHR", fs_CmdDispatchBase),
#undef H
	};
	return fs_find_hook(hooks, sizeof hooks / sizeof hooks[0], name);
}
