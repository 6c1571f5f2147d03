// A headless Vulkan program in C that makes processes, as the layer's
// tests run it (procs_test.go), plainly and under the layer, comparing
// what it prints and its exit status. Each mode submits N labelled
// regions, one a submission, named for the process ("parent", "child",
// "before exec") and waited for.
//
//   procs child N          N regions "child", then exit 0
//   procs fork-exit N      N regions, fork; the child exits at once
//                          (exit(0), atexit handlers and all); N more
//   procs fork-instance N  the same, the parent's device and instance
//                          destroyed before the fork (lavapipe's threads
//                          do not survive one) and made again after, the
//                          child making an instance and a device of its
//                          own and submitting N regions
//   procs system-child N   N regions, system("procs child N"), N more
//   procs spawn-child N    the same through posix_spawn
//   procs exec-self N      N regions "before exec", then exec of
//                          "procs child N"
//   procs signals N        N regions, then prints "ready" and waits for
//                          SIGINT or SIGQUIT; a second of the same kind
//                          is a force quit (exit 99); one only prints the
//                          count and exits 0 a second after it
//   procs crash-early N    N regions (fewer than a batch), then abort()
//
// With PROCS_WORK set, the parent's device also has what the layer's
// profiler makes (fork-exit only): each region resets, writes and copies
// timestamps into mapped host-visible memory; PROCS_WORK=calibrated
// resets them on the host and calibrates at each region, and
// PROCS_WORK=thread reads and calibrates on a thread besides (see work).
// PROCS_BACKTRACE prints
// where a forked child faults; PROCS_QUICK_EXIT makes it leave by _exit.
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "vkprog.h"

extern char **environ;

static const char *self;

// work is what the layer's profiler has on a device, made by the program
// itself (PROCS_WORK set): a timestamp query pool whose queries each
// region resets, writes and copies into host-visible memory, mapped.
static struct {
	VkQueryPool qp;
	VkBuffer buf;
	VkDeviceMemory mem;
	void *mapped;
	// With PROCS_WORK=calibrated or thread: the device has calibrated
	// timestamps and host query reset, which each region uses; with
	// thread, a thread of the program's reads the queries back and
	// calibrates every 100 us while the regions and the fork go on, as
	// the layer's goroutines do.
	VkDevice dev;
	int calibrated;
	PFN_vkGetCalibratedTimestampsEXT calibrate;
	PFN_vkResetQueryPoolEXT reset;
	volatile int stop;
	pthread_t reader;
} work;

static void calibrate(void) {
	VkCalibratedTimestampInfoEXT ti[2] = {{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
					      {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
					       .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
	uint64_t ts[2], dev;
	work.calibrate(work.dev, 2, ti, ts, &dev);
}

static void *reader(void *arg) {
	(void)arg;
	while (!work.stop) {
		uint64_t v[2];
		vkGetQueryPoolResults(work.dev, work.qp, 0, 2, sizeof v, v, sizeof v[0], VK_QUERY_RESULT_64_BIT);
		calibrate();
		usleep(100);
	}
	return NULL;
}

// work_device makes the device, with calibrated timestamps and host
// query reset where PROCS_WORK asks for them.
static device work_device(instance *i) {
	const char *w = getenv("PROCS_WORK");
	if (!w || (strcmp(w, "calibrated") != 0 && strcmp(w, "thread") != 0))
		return make_device(i);
	VkPhysicalDeviceHostQueryResetFeaturesEXT hr = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES_EXT,
							 .hostQueryReset = VK_TRUE};
	const char *exts[] = {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME};
	device d = make_device_with(i, exts, 2, &hr);
	work.dev = d.dev;
	work.calibrated = 1 + (strcmp(w, "thread") == 0);
	work.calibrate = (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(d.dev, "vkGetCalibratedTimestampsEXT");
	work.reset = (PFN_vkResetQueryPoolEXT)vkGetDeviceProcAddr(d.dev, "vkResetQueryPoolEXT");
	if (!work.calibrate || !work.reset) {
		fprintf(stderr, "procs: no calibrated timestamps or host query reset\n");
		exit(2);
	}
	return d;
}

static void make_work(instance *i, device *d) {
	VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
	CHECK(vkCreateQueryPool(d->dev, &qi, NULL, &work.qp));
	int host;
	work.buf = buffer(i, d, 4096, &work.mem, &host);
	if (!host) {
		fprintf(stderr, "procs: no host-visible memory\n");
		exit(2);
	}
	CHECK(vkMapMemory(d->dev, work.mem, 0, VK_WHOLE_SIZE, 0, &work.mapped));
}

// regions submits n command buffers of one labelled region each.
static void regions(device *d, const char *name, int n) {
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		if (work.qp && work.calibrated) {
			work.reset(d->dev, work.qp, 0, 2);
			calibrate();
			vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, work.qp, 0);
		} else if (work.qp) {
			vkCmdResetQueryPool(d->cmd, work.qp, 0, 2);
			vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, work.qp, 0);
		}
		label(d, name);
		d->end(d->cmd);
		if (work.qp) {
			vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, work.qp, 1);
			vkCmdCopyQueryPoolResults(d->cmd, work.qp, 0, 2, work.buf, 0, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
		}
		CHECK(vkEndCommandBuffer(d->cmd));
		submit_wait(d, &d->cmd, 1);
	}
}

// profiled makes an instance and a device, submits n regions named
// name, and destroys them.
static void profiled(const char *name, int n) {
	instance i = make_instance(VK_API_VERSION_1_1);
	device d = make_device(&i);
	regions(&d, name, n);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
}

static void status(const char *what, int ws) {
	if (WIFEXITED(ws))
		printf("%s exited %d\n", what, WEXITSTATUS(ws));
	else
		printf("%s killed by %d\n", what, WTERMSIG(ws));
	fflush(stdout);
}

// on_fault prints where a forked child faulted (PROCS_BACKTRACE set),
// then dies of the signal as it would have.
static void on_fault(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	void *pcs[64];
	char head[96];
	int len = snprintf(head, sizeof head, "child: signal %d at address %p\n", sig, si->si_addr);
	write(2, head, len);
	backtrace_symbols_fd(pcs, backtrace(pcs, 64), 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

// forked forks: the child exits, after its own instance where asked
// (PROCS_QUICK_EXIT set: through _exit, no atexit handlers).
static void forked(int n, int instance_too) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		if (getenv("PROCS_BACKTRACE")) {
			struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
			sigemptyset(&sa.sa_mask);
			sigaction(SIGSEGV, &sa, NULL);
			sigaction(SIGBUS, &sa, NULL);
		}
		if (instance_too)
			profiled("child", n);
		printf("child done\n");
		if (getenv("PROCS_QUICK_EXIT")) {
			fflush(stdout);
			_exit(0);
		}
		exit(0);
	}
	int ws;
	waitpid(pid, &ws, 0);
	status("fork", ws);
}

static void spawned(int n) {
	char count[16];
	snprintf(count, sizeof count, "%d", n);
	char *argv[] = {(char *)self, "child", count, NULL};
	pid_t pid;
	fflush(stdout);
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0) {
		perror("posix_spawn");
		exit(2);
	}
	int ws;
	waitpid(pid, &ws, 0);
	status("spawn", ws);
}

static void systemed(int n) {
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "'%s' child %d", self, n);
	fflush(stdout);
	status("system", system(cmd));
}

static volatile sig_atomic_t ints, quits;

static void on_signal(int sig) {
	volatile sig_atomic_t *c = sig == SIGINT ? &ints : &quits;
	if (++*c > 1)
		_exit(99); // a second one: force quit
}

// signals waits for SIGINT or SIGQUIT, then a second for another.
static void signals(void) {
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!ints && !quits)
		pause();
	struct timespec left = {1, 0};
	while (nanosleep(&left, &left) != 0)
		;
	printf("SIGINT %d SIGQUIT %d\n", (int)ints, (int)quits);
}

// parent runs mode between two sets of n regions of its own device.
static int parent(const char *mode, int n) {
	instance i = make_instance(VK_API_VERSION_1_1);
	device d = work_device(&i);
	if (getenv("PROCS_WORK"))
		make_work(&i, &d);
	if (work.calibrated == 2)
		pthread_create(&work.reader, NULL, reader, NULL);
	regions(&d, strcmp(mode, "exec-self") == 0 ? "before exec" : "parent", n);
	if (strcmp(mode, "fork-exit") == 0)
		forked(n, 0);
	else if (strcmp(mode, "fork-instance") == 0) {
		destroy_device(&d);
		vkDestroyInstance(i.inst, NULL);
		forked(n, 1);
		i = make_instance(VK_API_VERSION_1_1);
		d = make_device(&i);
	} else if (strcmp(mode, "system-child") == 0)
		systemed(n);
	else if (strcmp(mode, "spawn-child") == 0)
		spawned(n);
	else if (strcmp(mode, "signals") == 0)
		signals();
	else if (strcmp(mode, "crash-early") == 0)
		abort();
	else if (strcmp(mode, "exec-self") == 0) {
		char count[16];
		snprintf(count, sizeof count, "%d", n);
		fflush(stdout);
		execl(self, self, "child", count, (char *)NULL);
		perror("exec");
		return 2;
	} else {
		fprintf(stderr, "procs: unknown mode %s\n", mode);
		return 2;
	}
	regions(&d, "parent", n);
	if (work.calibrated == 2) {
		work.stop = 1;
		pthread_join(work.reader, NULL);
	}
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	printf("%s done\n", mode);
	return 0;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: procs MODE N\n");
		return 2;
	}
	self = argv[0];
	int n = atoi(argv[2]);
	if (strcmp(argv[1], "child") == 0) {
		profiled("child", n);
		printf("child done\n");
		return 0;
	}
	return parent(argv[1], n);
}
