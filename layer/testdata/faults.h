// faults.h: a test program that faults says where before it dies: the
// signal, the faulting address, the instruction's library and symbol,
// and the return addresses a frame-pointer walk finds (code built
// without frame pointers ends the walk early). Its exit is the signal's,
// as without it. The Go half of Framescope's layer, loaded later, keeps
// this handler for faults outside Go code. Include it first: it needs
// _GNU_SOURCE for dladdr and the saved registers.
#ifndef FAULTS_H
#define FAULTS_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

// fault_where writes one line for address a to standard error.
static void fault_where(const char *what, void *a) {
	Dl_info di = {0};
	char line[400];
	int n;
	if (dladdr(a, &di) && di.dli_fname)
		n = snprintf(line, sizeof line, "%s %p in %s+%#lx (%s)\n", what, a, di.dli_fname,
			     (unsigned long)((char *)a - (char *)di.dli_fbase), di.dli_sname ? di.dli_sname : "?");
	else
		n = snprintf(line, sizeof line, "%s %p\n", what, a);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void fault_report(int sig, siginfo_t *si, void *ctx) {
	char head[160];
	int n = snprintf(head, sizeof head, "fault: signal %d (%s) at address %p, thread %d\n", sig, strsignal(sig), si->si_addr, (int)gettid());
	if (n > 0)
		(void)!write(2, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1);
#if defined(__x86_64__)
	ucontext_t *uc = ctx;
	void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
	fault_where("fault: pc", pc);
	Dl_info here;
	if (!dladdr(pc, &here)) // a call through a bad pointer: its return address is on the stack
		fault_where("fault: called from", *(void **)uc->uc_mcontext.gregs[REG_RSP]);
	void **fp = (void **)uc->uc_mcontext.gregs[REG_RBP];
	for (int k = 0; k < 16 && fp && ((unsigned long)fp & 7) == 0 && (unsigned long)fp > 4096; k++) {
		Dl_info di;
		if (!dladdr(fp[1], &di))
			break;
		fault_where("fault: called from", fp[1]);
		fp = (void **)fp[0];
	}
#else
	(void)ctx;
#endif
	signal(sig, SIG_DFL);
	raise(sig);
}

// report_faults installs fault_report for the signals of a fault.
static void report_faults(void) {
	static char stack[64 << 10];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_sigaction = fault_report, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
	for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
		sigaction(sigs[k], &sa, NULL);
}

#endif
