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
#define _GNU_SOURCE
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

// regions submits n command buffers of one labelled region each.
static void regions(device *d, const char *name, int n) {
	for (int k = 0; k < n; k++) {
		VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
		CHECK(vkBeginCommandBuffer(d->cmd, &bi));
		label(d, name);
		d->end(d->cmd);
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

// forked forks: the child exits, after its own instance where asked.
static void forked(int n, int instance_too) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		if (instance_too)
			profiled("child", n);
		printf("child done\n");
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
	device d = make_device(&i);
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
