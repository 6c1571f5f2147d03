// The program's own pipeline statistics queries, where the layer counts
// each zone's work (framescope run -work): Vulkan lets one such query be
// active at a time in a command buffer, so the layer's counts in it end
// before the program begins one, and none begins there until the program
// ends it (GPU.BeforeStatisticsQuery). The layer keeps which query pools
// the program made of that type; its own go down the chain unseen.
#include <stdlib.h>

#include "shim.h"

#define QBUCKETS 256

typedef struct qpool {
	uint64_t pool;
	struct qpool *next;
} qpool;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static qpool *table[QBUCKETS];

static unsigned qbucket(uint64_t pool) { return (unsigned)((pool * 0x9E3779B97F4A7C15ull) >> 56) % QBUCKETS; }

// stats_pool reports whether pool is one of the program's pipeline
// statistics query pools.
static int stats_pool(VkQueryPool pool) {
	uint64_t p = (uint64_t)pool;
	int found = 0;
	pthread_rwlock_rdlock(&lock);
	for (qpool *q = table[qbucket(p)]; q && !found; q = q->next)
		found = q->pool == p;
	pthread_rwlock_unlock(&lock);
	return found;
}

static void add_pool(VkQueryPool pool) {
	qpool *q = malloc(sizeof *q);
	if (!q)
		return; // not known: its queries then meet the layer's, as before
	q->pool = (uint64_t)pool;
	pthread_rwlock_wrlock(&lock);
	q->next = table[qbucket(q->pool)];
	table[qbucket(q->pool)] = q;
	pthread_rwlock_unlock(&lock);
}

static void remove_pool(VkQueryPool pool) {
	uint64_t p = (uint64_t)pool;
	pthread_rwlock_wrlock(&lock);
	for (qpool **q = &table[qbucket(p)]; *q; q = &(*q)->next)
		if ((*q)->pool == p) {
			qpool *gone = *q;
			*q = gone->next;
			free(gone);
			break;
		}
	pthread_rwlock_unlock(&lock);
}

static VKAPI_ATTR VkResult VKAPI_CALL fs_CreateQueryPool(VkDevice device, const VkQueryPoolCreateInfo *ci,
							 const VkAllocationCallbacks *alloc, VkQueryPool *pool) {
	fs_device *v = fs_device_of(device);
	VkResult r = v->CreateQueryPool(device, ci, alloc, pool);
	if (r == VK_SUCCESS && v->work && ci->queryType == VK_QUERY_TYPE_PIPELINE_STATISTICS)
		add_pool(*pool);
	return r;
}

static VKAPI_ATTR void VKAPI_CALL fs_DestroyQueryPool(VkDevice device, VkQueryPool pool, const VkAllocationCallbacks *alloc) {
	fs_device *v = fs_device_of(device);
	if (pool && v->work)
		remove_pool(pool);
	v->DestroyQueryPool(device, pool, alloc);
}

// stats_query tells Go that the program begins (begun) or ended a
// statistics query of its own in cmd.
static void stats_query(fs_device *v, VkCommandBuffer cmd, VkQueryPool pool, int begun) {
	if (v->work && fs_go_loaded && stats_pool(pool))
		fs_go.stats_query(cmd, begun);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginQuery(VkCommandBuffer cmd, VkQueryPool pool, uint32_t query, VkQueryControlFlags flags) {
	fs_device *v = fs_device_of(cmd);
	stats_query(v, cmd, pool, 1);
	v->CmdBeginQuery(cmd, pool, query, flags);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndQuery(VkCommandBuffer cmd, VkQueryPool pool, uint32_t query) {
	fs_device *v = fs_device_of(cmd);
	v->CmdEndQuery(cmd, pool, query);
	stats_query(v, cmd, pool, 0);
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdBeginQueryIndexedEXT(VkCommandBuffer cmd, VkQueryPool pool, uint32_t query,
							     VkQueryControlFlags flags, uint32_t index) {
	fs_device *v = fs_device_of(cmd);
	stats_query(v, cmd, pool, 1);
	DOWN(v, CmdBeginQueryIndexedEXT, (cmd, pool, query, flags, index));
}

static VKAPI_ATTR void VKAPI_CALL fs_CmdEndQueryIndexedEXT(VkCommandBuffer cmd, VkQueryPool pool, uint32_t query, uint32_t index) {
	fs_device *v = fs_device_of(cmd);
	DOWN(v, CmdEndQueryIndexedEXT, (cmd, pool, query, index));
	stats_query(v, cmd, pool, 0);
}

PFN_vkVoidFunction fs_query_hook(const char *name) {
	static const fs_hook hooks[] = {
#define H FS_HOOK
	    H("vkCreateQueryPool", fs_CreateQueryPool),
	    H("vkDestroyQueryPool", fs_DestroyQueryPool),
	    H("vkCmdBeginQuery", fs_CmdBeginQuery),
	    H("vkCmdEndQuery", fs_CmdEndQuery),
	    H("vkCmdBeginQueryIndexedEXT", fs_CmdBeginQueryIndexedEXT),
	    H("vkCmdEndQueryIndexedEXT", fs_CmdEndQueryIndexedEXT),
#undef H
	};
	return fs_find_hook(hooks, sizeof hooks / sizeof hooks[0], name);
}
