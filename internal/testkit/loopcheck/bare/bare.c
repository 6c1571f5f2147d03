// bare: the render-loop checker's application as a program of its own,
// with no profiler in it: it runs a loop the checker drew (a script
// written by loopcheck.Bare) with the application's C (app.c, submit.c,
// twin.c, render.c), its zones made debug-utils labels, and writes a
// journal: when each submission was made and when the wait for it
// returned, on CLOCK_MONOTONIC; a checksum of what the GPU wrote; the
// validation layer's messages.
//
//   bare probe SPIRV             what the device offers, one fact a line
//   bare run SCRIPT JOURNAL SPIRV
//
// Objects are named by the script with small numbers: pools, command
// buffers, fences, semaphores and submissions each have their own.
// Between "fork" and "join", each "thread" block runs on a thread of its
// own, as the checker's recording goroutines do.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "app_impl.h"

#define MAXOBJ 65536
#define MAXARG 14

typedef struct {
	char op[12];
	int64_t a[MAXARG];
	int n;
	char name[48];
} op_t;

static lc_app *app;
static lc_twin *twin;
static VkCommandBuffer twin_cmd;
static VkCommandPool pools[MAXOBJ];
static VkCommandBuffer cmds[MAXOBJ];
static VkFence fences[MAXOBJ];
static VkSemaphore sems[MAXOBJ];
static int queue_of[64]; // the script's queue i: lc_queue_at(queue_of[i])
static PFN_vkCmdBeginDebugUtilsLabelEXT label_begin;
static PFN_vkCmdEndDebugUtilsLabelEXT label_end;
static FILE *journal;
static pthread_mutex_t journal_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *spirv;
static size_t spirv_words;

// The readback buffer, host-visible, that "copyout" copies the work
// buffer's ranges into; "checksum" hashes it.
static VkBuffer readback;
static VkDeviceMemory readback_mem;
static uint8_t *readback_map;

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what, const op_t *o) {
	fprintf(stderr, "bare: %s%s%s\n", what, o ? " at " : "", o ? o->op : "");
	exit(2);
}

static void check(int rc, const op_t *o) {
	if (rc != 0) {
		fprintf(stderr, "bare: %s: VkResult %d\n", o->op, rc);
		exit(2);
	}
}

static int64_t id(const op_t *o, int i) {
	if (i >= o->n || o->a[i] < 0 || o->a[i] >= MAXOBJ) die("an object number out of range", o);
	return o->a[i];
}

static lc_queue queue(const op_t *o, int i) {
	int64_t q = o->a[i];
	if (i >= o->n || q < 0 || q >= 64 || q >= lc_queue_count(app)) die("no such queue", o);
	return lc_queue_at(app, queue_of[q]);
}

static void load_spirv(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) die("cannot open the SPIR-V", NULL);
	static uint32_t words[1 << 16];
	spirv_words = fread(words, 4, 1 << 16, f);
	fclose(f);
	spirv = words;
}

static void make_app(const op_t *o) {
	lc_config c = {.validation = (int)o->a[0], .host_reset = (int)o->a[1], .calibrated = (int)o->a[2], .queues = (int)o->a[3],
		       .api10 = (int)o->a[4], .timeline = (int)o->a[5], .sync2 = (int)o->a[5], .rendering = (int)o->a[5],
		       .pipeline_stats = (int)o->a[6], .count_spirv = spirv, .count_words = spirv_words};
	char err[512];
	if (lc_create(&c, &app, err, sizeof err) != 0) {
		fprintf(stderr, "bare: %s\n", err);
		exit(2);
	}
	label_begin = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(lc_instance(app), "vkCmdBeginDebugUtilsLabelEXT");
	label_end = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(lc_instance(app), "vkCmdEndDebugUtilsLabelEXT");
	if (!label_begin || !label_end) die("no debug utils labels", o);
}

// ---- The readback buffer ----

static void make_readback(void) {
	VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bi.size = LC_WORK;
	bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	if (vkCreateBuffer(app->device, &bi, NULL, &readback) != VK_SUCCESS) die("vkCreateBuffer (readback)", NULL);
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(app->device, readback, &req);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(app->physical, &mp);
	VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	uint32_t type = 32;
	for (uint32_t i = 0; i < mp.memoryTypeCount && type == 32; i++)
		if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) type = i;
	if (type == 32) die("no host-visible memory", NULL);
	VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = type;
	if (vkAllocateMemory(app->device, &mai, NULL, &readback_mem) != VK_SUCCESS ||
	    vkBindBufferMemory(app->device, readback, readback_mem, 0) != VK_SUCCESS ||
	    vkMapMemory(app->device, readback_mem, 0, LC_WORK, 0, (void **)&readback_map) != VK_SUCCESS)
		die("the readback buffer's memory", NULL);
	memset(readback_map, 0, LC_WORK);
}

static void drop_readback(void) {
	if (!readback) return;
	vkDestroyBuffer(app->device, readback, NULL);
	vkFreeMemory(app->device, readback_mem, NULL);
	readback = VK_NULL_HANDLE;
	readback_mem = VK_NULL_HANDLE;
	readback_map = NULL;
}

// copyout records the copy of the work buffer's [off, off+size) into the
// readback buffer, after the transfers before it.
static void copyout(VkCommandBuffer c, uint64_t off, uint64_t size) {
	if (!readback) make_readback();
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
	vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	VkBufferCopy r = {off, off, size};
	vkCmdCopyBuffer(c, app->work, readback, 1, &r);
}

static void checksum(void) {
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; readback_map && i < LC_WORK; i++) h = (h ^ readback_map[i]) * 0x100000001b3ull;
	fprintf(journal, "checksum %016llx\n", (unsigned long long)h);
}

// ---- Running ops ----

static void run_ops(op_t *ops, size_t from, size_t to);

typedef struct {
	op_t *ops;
	size_t from, to;
	pthread_t th;
} block;

static void *run_block(void *p) {
	block *b = p;
	run_ops(b->ops, b->from, b->to);
	return NULL;
}

// fork runs the thread blocks after ops[i] ("fork") up to "join", each on
// a thread, and returns the index of the join.
static size_t fork_join(op_t *ops, size_t i, size_t n) {
	block bs[16];
	int nb = 0;
	size_t k = i + 1;
	for (; k < n && strcmp(ops[k].op, "join") != 0; k++) {
		if (strcmp(ops[k].op, "thread") == 0) {
			if (nb == 16) die("more than 16 threads", &ops[k]);
			if (nb > 0) bs[nb - 1].to = k;
			bs[nb++] = (block){.ops = ops, .from = k + 1, .to = k + 1};
		}
	}
	if (k == n) die("a fork without a join", &ops[i]);
	if (nb > 0) bs[nb - 1].to = k;
	for (int b = 0; b < nb; b++)
		if (pthread_create(&bs[b].th, NULL, run_block, &bs[b]) != 0) die("pthread_create", &ops[i]);
	for (int b = 0; b < nb; b++) pthread_join(bs[b].th, NULL);
	return k;
}

static void submit(const op_t *o) {
	// submit SUB Q WAIT WAITV SIGNAL SIGNALV FENCE N CMD...
	if (o->n < 8 || o->a[7] < 0 || o->a[7] > 8 || o->n != 8 + o->a[7]) die("a malformed submit", o);
	VkCommandBuffer cs[8];
	for (int i = 0; i < o->a[7]; i++) cs[i] = cmds[id(o, 8 + i)];
	VkSemaphore wait = o->a[2] >= 0 ? sems[id(o, 2)] : VK_NULL_HANDLE;
	VkSemaphore signal = o->a[4] >= 0 ? sems[id(o, 4)] : VK_NULL_HANDLE;
	VkFence fence = o->a[6] >= 0 ? fences[id(o, 6)] : VK_NULL_HANDLE;
	int64_t t0 = now_ns();
	check(lc_submit(app, queue(o, 1).queue, (uint32_t)o->a[7], cs, wait, (uint64_t)o->a[3], signal, (uint64_t)o->a[5], fence), o);
	pthread_mutex_lock(&journal_mu);
	fprintf(journal, "s %lld %lld\n", (long long)o->a[0], (long long)t0);
	pthread_mutex_unlock(&journal_mu);
}

static void done(const op_t *o) {
	int64_t t = now_ns();
	pthread_mutex_lock(&journal_mu);
	for (int i = 0; i < o->n; i++) fprintf(journal, "d %lld %lld\n", (long long)o->a[i], (long long)t);
	pthread_mutex_unlock(&journal_mu);
}

static void label(VkCommandBuffer c, const char *name) {
	VkDebugUtilsLabelEXT l = {VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
	l.pLabelName = name;
	label_begin(c, &l);
}

#define IS(s) (strcmp(o->op, s) == 0)

static void run_op(op_t *ops, size_t *i, size_t n) {
	op_t *o = &ops[*i];
	if (IS("fork")) {
		*i = fork_join(ops, *i, n);
	} else if (IS("app")) {
		make_app(o);
	} else if (IS("queues")) {
		for (int k = 0; k < o->n && k < 64; k++) queue_of[k] = (int)o->a[k];
	} else if (IS("sync2")) {
		lc_use_sync2(app, (int)o->a[0]);
	} else if (IS("pool")) {
		pools[id(o, 0)] = lc_create_pool(app, queue(o, 1).family);
		if (!pools[o->a[0]]) die("vkCreateCommandPool", o);
	} else if (IS("dpool")) {
		lc_destroy_pool(app, pools[id(o, 0)]);
	} else if (IS("rpool")) {
		check(lc_reset_pool(app, pools[id(o, 0)]), o);
	} else if (IS("alloc")) {
		cmds[id(o, 0)] = lc_alloc_cmd(app, pools[id(o, 1)], (int)o->a[2]);
		if (!cmds[o->a[0]]) die("vkAllocateCommandBuffers", o);
	} else if (IS("begin")) {
		VkCommandBuffer c = cmds[id(o, 0)];
		check(o->a[2] ? (o->a[1] ? lc_begin_reusable_secondary(c) : lc_begin_reusable(c)) : lc_begin_cmd(c, (int)o->a[1]), o);
	} else if (IS("end")) {
		check(lc_end_cmd(cmds[id(o, 0)]), o);
	} else if (IS("label")) {
		label(o->a[0] < 0 ? twin_cmd : cmds[id(o, 0)], o->name);
	} else if (IS("unlabel")) {
		label_end(o->a[0] < 0 ? twin_cmd : cmds[id(o, 0)]);
	} else if (IS("fill")) {
		lc_fill(app, cmds[id(o, 0)], (uint64_t)o->a[1], (uint32_t)o->a[2], (int)o->a[3]);
	} else if (IS("zero")) {
		vkCmdFillBuffer(cmds[id(o, 0)], app->work, (uint64_t)o->a[1], (uint64_t)o->a[2], 0);
	} else if (IS("copyout")) {
		copyout(cmds[id(o, 0)], (uint64_t)o->a[1], (uint64_t)o->a[2]);
	} else if (IS("checksum")) {
		checksum();
	} else if (IS("dispatch")) {
		lc_dispatch(app, cmds[id(o, 0)], (uint32_t)o->a[1]);
	} else if (IS("exec")) {
		VkCommandBuffer s[4] = {0};
		for (int k = 0; k < o->n - 1 && k < 4; k++) s[k] = cmds[id(o, k + 1)];
		lc_execute(cmds[id(o, 0)], (uint32_t)(o->n - 1), s[0], s[1], s[2], s[3]);
	} else if (IS("rbegin")) {
		lc_begin_rendering(app, cmds[id(o, 0)]);
	} else if (IS("rend")) {
		lc_end_rendering(app, cmds[id(o, 0)]);
	} else if (IS("fence")) {
		fences[id(o, 0)] = lc_create_fence(app);
	} else if (IS("dfence")) {
		lc_destroy_fence(app, fences[id(o, 0)]);
	} else if (IS("sem")) {
		sems[id(o, 0)] = o->a[1] ? lc_create_timeline(app) : lc_create_semaphore(app);
	} else if (IS("dsem")) {
		lc_destroy_semaphore(app, sems[id(o, 0)]);
	} else if (IS("submit")) {
		submit(o);
	} else if (IS("waitf")) {
		check(lc_wait_fence(app, fences[id(o, 0)], 30000000000ull), o);
	} else if (IS("waitt")) {
		check(lc_wait_timeline(app, sems[id(o, 0)], (uint64_t)o->a[1], 30000000000ull), o);
	} else if (IS("done")) {
		done(o);
	} else if (IS("idle")) {
		check(lc_wait_idle(app), o);
	} else if (IS("remake")) {
		drop_readback();
		lc_destroy_device(app);
		char err[512];
		if (lc_create_device(app, err, sizeof err) != 0) {
			fprintf(stderr, "bare: %s\n", err);
			exit(2);
		}
	} else if (IS("twin")) {
		char err[512];
		if (lc_twin_create(app, &twin, err, sizeof err) != 0) {
			fprintf(stderr, "bare: %s\n", err);
			exit(2);
		}
	} else if (IS("twinbegin")) {
		if (!(twin_cmd = lc_twin_begin(twin))) die("the second device's command buffer", o);
	} else if (IS("twinsubmit")) {
		int64_t t0 = now_ns();
		check(lc_twin_submit(twin), o);
		fprintf(journal, "s %lld %lld\n", (long long)o->a[0], (long long)t0);
	} else if (IS("twinwait")) {
		check(lc_twin_wait(twin), o);
	} else if (IS("twinend")) {
		lc_twin_destroy(twin);
		twin = NULL;
	} else {
		die("an unknown op", o);
	}
}

static void run_ops(op_t *ops, size_t from, size_t to) {
	for (size_t i = from; i < to; i++) run_op(ops, &i, to);
}

// ---- The script ----

static op_t *parse(const char *path, size_t *n) {
	FILE *f = fopen(path, "r");
	if (!f) die("cannot open the script", NULL);
	size_t cap = 1024;
	op_t *ops = malloc(cap * sizeof *ops);
	char line[512];
	*n = 0;
	while (fgets(line, sizeof line, f)) {
		if (*n == cap) ops = realloc(ops, (cap *= 2) * sizeof *ops);
		op_t *o = &ops[*n];
		memset(o, 0, sizeof *o);
		char *save = NULL, *tok = strtok_r(line, " \n", &save);
		if (!tok) continue;
		snprintf(o->op, sizeof o->op, "%s", tok);
		while ((tok = strtok_r(NULL, " \n", &save))) {
			if (*tok == '"') {
				snprintf(o->name, sizeof o->name, "%s", tok + 1);
			} else if (o->n < MAXARG) {
				o->a[o->n++] = strtoll(tok, NULL, 10);
			} else {
				die("too many arguments", o);
			}
		}
		(*n)++;
	}
	fclose(f);
	return ops;
}

static int probe(void) {
	lc_config c = {.host_reset = 1, .calibrated = 1, .queues = 2, .timeline = 1, .sync2 = 1, .rendering = 1, .pipeline_stats = 1,
		       .count_spirv = spirv, .count_words = spirv_words};
	char err[512];
	if (lc_create(&c, &app, err, sizeof err) != 0) {
		fprintf(stderr, "bare: %s\n", err);
		return 2;
	}
	printf("name %s\n", lc_device_name(app));
	printf("features %d %d %d %d %d %d\n", lc_has_host_reset(app), lc_has_calibrated(app), lc_has_pipeline_stats(app),
	       lc_has_timeline(app), lc_has_sync2(app), lc_has_rendering(app));
	for (int i = 0; i < lc_queue_count(app); i++) {
		lc_queue q = lc_queue_at(app, i);
		printf("queue %u %u %u\n", q.family, q.index, q.flags);
	}
	lc_destroy(app);
	return 0;
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "probe") == 0) {
		load_spirv(argv[2]);
		return probe();
	}
	if (argc != 5 || strcmp(argv[1], "run") != 0) {
		fprintf(stderr, "usage: bare probe SPIRV | bare run SCRIPT JOURNAL SPIRV\n");
		return 2;
	}
	load_spirv(argv[4]);
	size_t n;
	op_t *ops = parse(argv[2], &n);
	if (!(journal = fopen(argv[3], "w"))) die("cannot write the journal", NULL);
	run_ops(ops, 0, n);
	if (twin) lc_twin_destroy(twin);
	if (app) {
		lc_wait_idle(app);
		drop_readback();
	}
	char last[2048];
	uint64_t msgs = lc_messages(last, sizeof last);
	fprintf(journal, "messages %llu\n", (unsigned long long)msgs);
	if (msgs) fprintf(journal, "last %s\n", last);
	if (app) lc_destroy(app);
	fclose(journal);
	free(ops);
	return 0;
}
