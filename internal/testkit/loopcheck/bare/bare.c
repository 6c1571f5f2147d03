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
//
// The loop's shape (loopcheck.Shape) adds threads that make and destroy
// instances and devices ("dthread", "djoin"), children ("child": fork,
// fork and exec, system, posix_spawn; those with Vulkan run this program
// as "bare child N STATUS"), a signal ("handle", "signal"). What the
// program says of them goes to standard output, unbuffered, for a run
// under a profiler must say the same.
//
//   bare child N STATUS          N labelled submissions on a device of its own (0: no Vulkan), then exit STATUS
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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


// ---- The shape ----

static char self_path[4096];
static volatile sig_atomic_t caught;
static int handled;

static void on_signal(int sig) {
	(void)sig;
	caught++;
}

// labelled submits n command buffers, each with one label named name, on
// a's first queue, one at a time, and waits for each; sub0 >= 0 journals
// them as submissions sub0, sub0+1, ...
static void labelled(lc_app *a, int n, const char *name, int64_t sub0) {
	PFN_vkCmdBeginDebugUtilsLabelEXT begin =
		(PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(lc_instance(a), "vkCmdBeginDebugUtilsLabelEXT");
	PFN_vkCmdEndDebugUtilsLabelEXT end = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetInstanceProcAddr(lc_instance(a), "vkCmdEndDebugUtilsLabelEXT");
	if (!begin || !end) die("no debug utils labels", NULL);
	lc_queue q = lc_queue_at(a, 0);
	VkCommandPool pool = lc_create_pool(a, q.family);
	VkFence fence = lc_create_fence(a);
	if (!pool || !fence) die("a pool or fence of a shape", NULL);
	for (int i = 0; i < n; i++) {
		VkCommandBuffer c = lc_alloc_cmd(a, pool, 0);
		if (!c || lc_begin_cmd(c, 0) != 0) die("a command buffer of a shape", NULL);
		VkDebugUtilsLabelEXT l = {VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
		l.pLabelName = name;
		begin(c, &l);
		end(c);
		if (lc_end_cmd(c) != 0) die("vkEndCommandBuffer of a shape", NULL);
		int64_t t0 = now_ns();
		if (lc_submit(a, q.queue, 1, &c, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0, fence) != 0 ||
		    lc_wait_fence(a, fence, 30000000000ull) != 0 || vkResetFences(lc_device(a), 1, &fence) != VK_SUCCESS)
			die("a submission of a shape", NULL);
		int64_t t1 = now_ns();
		if (sub0 >= 0) {
			pthread_mutex_lock(&journal_mu);
			fprintf(journal, "s %lld %lld\nd %lld %lld\n", (long long)(sub0 + i), (long long)t0, (long long)(sub0 + i), (long long)t1);
			pthread_mutex_unlock(&journal_mu);
		}
	}
	lc_destroy_fence(a, fence);
	lc_destroy_pool(a, pool);
}

// make_plain makes an instance and a device with a queue a family: with
// the validation layer for a thread of the program (whose every device
// then has the same layers), without for a child.
static lc_app *make_plain(int validation) {
	lc_config c = {.queues = 1, .validation = validation};
	char err[512];
	lc_app *a;
	if (lc_create(&c, &a, err, sizeof err) != 0) {
		fprintf(stderr, "bare: %s\n", err);
		exit(2);
	}
	return a;
}

// A thread that makes and destroys an instance and a device, times
// times, with one labelled submission on each.
typedef struct {
	pthread_t th;
	int times, on;
	int64_t sub0;
} dthread_t;

static dthread_t dthreads[8];

static void *run_dthread(void *p) {
	dthread_t *d = p;
	for (int i = 0; i < d->times; i++) {
		lc_app *a = make_plain(1);
		labelled(a, 1, "h", d->sub0 + i);
		lc_destroy(a);
	}
	return NULL;
}

// child makes a child (how: 0 fork, 1 fork and exec, 2 system, 3
// posix_spawn) that makes subs labelled submissions (0: no Vulkan) and
// ends with status, waits for it, and says how it ended.
static void child(const op_t *o) {
	static const char *hows[] = {"fork", "fork+exec", "system", "posix_spawn"};
	int how = (int)o->a[0];
	if (o->n != 3 || how < 0 || how > 3) die("a malformed child", o);
	char subs[16], status[16];
	snprintf(subs, sizeof subs, "%lld", (long long)o->a[1]);
	snprintf(status, sizeof status, "%lld", (long long)o->a[2]);
	char *argv[] = {self_path, "child", subs, status, NULL};
	fflush(NULL);
	int ws = 0;
	pid_t pid = -1;
	switch (how) {
	case 0:
	case 1:
		pid = fork();
		if (pid < 0) die("fork", o);
		if (pid == 0) {
			if (how == 0) {
				printf("forked, exiting %s\n", status);
				_exit((int)o->a[2]);
			}
			execv(self_path, argv);
			_exit(127);
		}
		break;
	case 2: {
		char cmd[4200];
		snprintf(cmd, sizeof cmd, "'%s' child %s %s", self_path, subs, status);
		ws = system(cmd);
		break;
	}
	case 3: {
		extern char **environ;
		if (posix_spawn(&pid, self_path, NULL, NULL, argv, environ) != 0) die("posix_spawn", o);
		break;
	}
	}
	if (pid > 0) {
		while (waitpid(pid, &ws, 0) < 0)
			if (errno != EINTR) die("waitpid", o);
	}
	if (WIFEXITED(ws)) {
		printf("%s child ended %d\n", hows[how], WEXITSTATUS(ws));
	} else {
		printf("%s child killed by %d\n", hows[how], WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);
	}
}

// raise_signal sends sig to the program itself, or says "ready" and
// waits for it from outside (a minute at most, then says it never came).
static void raise_signal(const op_t *o) {
	int sig = (int)o->a[0];
	// An unhandled signal takes its default action whatever the program
	// inherited: a background job of a shell starts with SIGINT and SIGQUIT
	// ignored, and the run would then end 0 where the shape says killed.
	if (!handled)
		signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	pthread_mutex_lock(&journal_mu);
	fflush(journal);
	pthread_mutex_unlock(&journal_mu);
	if (!o->a[1]) {
		kill(getpid(), sig);
		return;
	}
	int before = caught;
	printf("ready\n");
	for (int i = 0; i < 6000 && caught == before; i++) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	if (caught == before) printf("no signal came\n");
}

static int child_main(int subs, int status) {
	if (subs > 0) {
		lc_app *a = make_plain(0);
		labelled(a, subs, "c", -1);
		lc_destroy(a);
	}
	printf("child: %d submissions, exiting %d\n", subs, status);
	return status;
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
		if (o->n > 3 && o->a[3]) // a secondary that continues a rendering instance
			check(lc_begin_continuing(c), o);
		else
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
		lc_begin_rendering_flags(app, cmds[id(o, 0)], o->n > 1 && o->a[1] ? VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT_KHR : 0);
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
	} else if (IS("dthread")) {
		dthread_t *d = &dthreads[id(o, 0) % 8];
		*d = (dthread_t){.times = (int)o->a[1], .on = 1, .sub0 = o->a[2]};
		if (pthread_create(&d->th, NULL, run_dthread, d) != 0) die("pthread_create", o);
	} else if (IS("djoin")) {
		dthread_t *d = &dthreads[id(o, 0) % 8];
		if (d->on) pthread_join(d->th, NULL);
		d->on = 0;
	} else if (IS("child")) {
		child(o);
	} else if (IS("handle")) {
		struct sigaction sa = {0};
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		if (sigaction((int)o->a[0], &sa, NULL) != 0) die("sigaction", o);
		handled = 1;
	} else if (IS("signal")) {
		raise_signal(o);
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
	setvbuf(stdout, NULL, _IONBF, 0);
	struct rlimit core = {0, 0};
	setrlimit(RLIMIT_CORE, &core); // a SIGQUIT drawn leaves no core
	ssize_t k = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
	if (k > 0) self_path[k] = 0;
	if (argc == 4 && strcmp(argv[1], "child") == 0) return child_main(atoi(argv[2]), atoi(argv[3]));
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
	for (int i = 0; i < 8; i++)
		if (dthreads[i].on) pthread_join(dthreads[i].th, NULL);
	if (handled) printf("caught %d\n", (int)caught);
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
