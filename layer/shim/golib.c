// Loading the layer's Go library: once, on the first instance, from the
// directory the layer itself was loaded from, and never into a process
// that already runs Go (two Go runtimes in one process do not work: a Go
// program should import the library instead).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define GO_LIBRARY "libframescope_go.so"

fs_golib fs_go;
int fs_go_loaded;
static pthread_once_t fs_go_once = PTHREAD_ONCE_INIT;

// is_go reports whether the program's executable is a Go binary: whether
// it has the section every Go build writes, .go.buildinfo.
static int is_go(void) {
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int found = 0;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shstrndx >= eh.e_shnum || eh.e_shnum > 4096) {
		close(fd);
		return 0;
	}
	Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
	if (sh && pread(fd, sh, eh.e_shnum * sizeof *sh, eh.e_shoff) == (ssize_t)(eh.e_shnum * sizeof *sh)) {
		Elf64_Shdr *strs = &sh[eh.e_shstrndx];
		char *names = strs->sh_size <= (1 << 20) ? malloc(strs->sh_size + 1) : NULL;
		if (names && pread(fd, names, strs->sh_size, strs->sh_offset) == (ssize_t)strs->sh_size) {
			names[strs->sh_size] = 0;
			for (int i = 0; i < eh.e_shnum && !found; i++)
				found = sh[i].sh_name < strs->sh_size && strcmp(names + sh[i].sh_name, ".go.buildinfo") == 0;
		}
		free(names);
	}
	free(sh);
	close(fd);
	return found;
}

static void at_exit(void) {
	if (fs_go_loaded)
		fs_go.at_exit();
}

// forked is set in a child that fork made of a process running the Go
// library: the child has the one thread that called fork, and a Go runtime
// whose other threads are gone, so any call into it may wait forever (at
// exit, it did). The child's hooks pass every call through, its exit
// handler does nothing, and a new instance there loads nothing: it exits,
// or execs, as it would without the layer (an exec starts afresh).
static int forked;

static void in_child(void) {
	forked = 1;
	fs_go_loaded = 0;
}

static void load(void) {
	if (is_go()) {
		fprintf(stderr, "framescope layer: %s is a Go program, and the layer's Go library cannot run beside its Go "
				"runtime: the layer passes every call through and profiles nothing (a Go program imports "
				"github.com/framescope/framescope/profiler instead)\n",
			program_invocation_short_name);
		return;
	}
	Dl_info info;
	if (!dladdr((void *)load, &info) || !info.dli_fname)
		return;
	// Keep the layer itself loaded for as long as the process lives: the
	// loader may unload layers at vkDestroyInstance, and the Go library's
	// goroutines and the exit handler outlive that.
	dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	char *self = strdup(info.dli_fname);
	if (!self)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dirname(self), GO_LIBRARY);
	free(self);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		fprintf(stderr, "framescope layer: %s: the layer passes every call through\n", dlerror());
		return;
	}
	int missing = 0;
#define SYM(f)                                                   \
	do {                                                     \
		*(void **)&fs_go.f = dlsym(h, "framescope_go_" #f); \
		missing |= fs_go.f == NULL;                      \
	} while (0)
	SYM(device_created);
	SYM(device_destroyed);
	SYM(queue);
	SYM(pool);
	SYM(pool_gone);
	SYM(allocated);
	SYM(freed);
	SYM(cmd_begin);
	SYM(name);
	SYM(cmd_end);
	SYM(execute);
	SYM(zone_begin);
	SYM(zone_end);
	SYM(cpu_begin);
	SYM(cpu_end);
	SYM(submit_begin);
	SYM(present);
	SYM(boundary);
	SYM(stats_query);
	SYM(at_exit);
#undef SYM
	if (missing) {
		fprintf(stderr, "framescope layer: %s lacks an entry point: the layer passes every call through\n", path);
		return;
	}
	fs_go_loaded = 1;
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
}

void fs_load_go(void) {
	pthread_once(&fs_go_once, load);
	if (forked == 1) { // said once, on the child's first instance
		forked = 2;
		fprintf(stderr, "framescope layer: process %d is a fork of a profiled process (no exec): its Vulkan "
				"calls pass through, unprofiled\n", (int)getpid());
	}
}
