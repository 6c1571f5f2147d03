// The zone path's guard: each thread that records zones has a record
// whose busy word it sets, with a plain store, around its Begin; a closer
// (EndFrame, a slot's release) changes the slot's state and then waits,
// in fs_guard_sync, until no thread is inside a Begin that may have read
// the old state. On Linux the reader side needs no fence: membarrier's
// private expedited command makes every running thread of the process
// execute a full barrier before fs_guard_sync reads the busy words.
// Without it, the reader side fences.

#define _GNU_SOURCE
#include "guard.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)

typedef void (*fsWriteTimestamp)(void *cmd, uint32_t stage, uint64_t pool, uint32_t query);

// fsReader is one thread's record, a cache line of its own. Records are
// never freed: a thread's exit frees its record for the next new thread,
// so there are at most as many as threads ever ran at once.
typedef struct fsReader {
	uint32_t busy;
	uint32_t used;
	// active: the thread began a zone since the last fs_guard_sync that
	// saw its record (it set active with a full barrier, once).
	uint32_t active;
	struct fsReader *next;
	char pad[64 - 4 * sizeof(uint32_t) - sizeof(void *)];
} fsReader;

static fsReader *fs_readers;
static __thread fsReader *fs_me;
static pthread_key_t fs_key;
static int fs_fence = 1; // readers fence: no membarrier (set once, before any reader)
static int fs_ready;

static void fs_release(void *p) {
	fsReader *r = p;
	__atomic_store_n(&r->used, 0, __ATOMIC_RELEASE);
}

static int fs_membarrier(int cmd) {
#if defined(__linux__) && defined(SYS_membarrier)
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
#else
	(void)cmd;
	return -1;
#endif
}

// fs_guard_init runs once, before any Begin (guard.go's sync.Once). It
// reports whether readers go without a fence.
int fs_guard_init(void) {
	if (pthread_key_create(&fs_key, fs_release) != 0) {
		return -1;
	}
	int want = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
	int have = fs_membarrier(MEMBARRIER_CMD_QUERY);
	if (have >= 0 && (have & want) == want && fs_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
		fs_fence = 0;
	}
	__atomic_store_n(&fs_ready, 1, __ATOMIC_RELEASE);
	return !fs_fence;
}

// fs_register gives the calling thread a record: a free one, else a new
// one pushed on the list. NULL when none could be made.
static fsReader *fs_register(void) {
	if (!__atomic_load_n(&fs_ready, __ATOMIC_ACQUIRE)) {
		return NULL;
	}
	fsReader *r;
	for (r = __atomic_load_n(&fs_readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		uint32_t free = 0;
		if (__atomic_compare_exchange_n(&r->used, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			break;
		}
	}
	if (!r) {
		r = aligned_alloc(64, sizeof *r);
		if (!r) {
			return NULL;
		}
		memset(r, 0, sizeof *r);
		r->used = 1;
		r->next = __atomic_load_n(&fs_readers, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&fs_readers, &r->next, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		}
	}
	if (pthread_setspecific(fs_key, r) != 0) {
		__atomic_store_n(&r->used, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	fs_me = r;
	return r;
}

// fs_guard_sync returns once no thread is inside a Begin that began
// before it was called. The caller has changed a slot's state with a
// sequentially consistent store: a Begin after this call sees it.
//
// Only threads that began a zone since the last call can be inside one:
// a thread's first Begin after a call sets its active word with a full
// barrier before it reads a slot's state, so either this call sees the
// word set or that Begin sees the new state. This call clears the words
// before it looks at the busy ones; where no other thread's was set (one
// thread records every zone, or none did), it needs no membarrier.
void fs_guard_sync(void) {
	int others = 0;
	for (fsReader *r = __atomic_load_n(&fs_readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		if (__atomic_load_n(&r->active, __ATOMIC_ACQUIRE) && __atomic_exchange_n(&r->active, 0, __ATOMIC_SEQ_CST) && r != fs_me) {
			others = 1;
		}
	}
	if (!others) {
		return;
	}
	if (!fs_fence) {
		fs_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	} else {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	for (fsReader *r = __atomic_load_n(&fs_readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		while (__atomic_load_n(&r->busy, __ATOMIC_ACQUIRE)) {
			sched_yield();
		}
	}
}

// fs_zone_begin hands out the slot's next pair when it lies in the first
// block and records its begin timestamp into cmd. It returns gen<<32 |
// query, or FS_BEGIN_NOFRAME, or FS_BEGIN_SLOW for Go's path (a pair
// past the first block, or a thread without a record): it never claims a
// pair it does not record.
int64_t fs_zone_begin(fsSlotHot *s, fsPairMeta *meta, uintptr_t cmd, uint32_t stage, uint32_t name, uintptr_t fn) {
	fsReader *r = fs_me;
	if (!r && !(r = fs_register())) {
		return FS_BEGIN_SLOW;
	}
	if (!__atomic_load_n(&r->active, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&r->active, 1, __ATOMIC_SEQ_CST); // a full barrier, once per fs_guard_sync
	}
	__atomic_store_n(&r->busy, 1, __ATOMIC_RELAXED);
	if (fs_fence) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} else {
		__atomic_signal_fence(__ATOMIC_SEQ_CST); // membarrier orders the store before the loads
	}
	int64_t res = FS_BEGIN_NOFRAME;
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == FS_SLOT_RECORDING) {
		uint32_t q = __atomic_load_n(&s->next, __ATOMIC_RELAXED);
		for (;;) {
			if ((uint64_t)q + 2 > s->cap) {
				res = FS_BEGIN_SLOW;
				goto out;
			}
			if (__atomic_compare_exchange_n(&s->next, &q, q + 2, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				break;
			}
		}
		fsPairMeta *m = &meta[q / 2];
		m->name = name;
		m->cmd = (uint64_t)cmd;
		uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
		((fsWriteTimestamp)fn)((void *)cmd, stage, s->pool, q);
		res = (int64_t)gen << 32 | q;
	}
out:
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
	return res;
}

#define FS_GEN_MASK ((1u << FS_GEN_BITS) - 1)

int fs_older(uint32_t w, uint32_t g) {
	uint32_t d = (g - w) & FS_GEN_MASK;
	return d != 0 && d < (1u << (FS_GEN_BITS - 1));
}

// fs_zone_end takes the pair, handed out in generation gen, from open to
// ending, records its end timestamp and marks it ended; 0 when the pair
// is not open in gen (ended already, given up, or its slot recycled).
int fs_zone_end(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, uintptr_t fn) {
	uint32_t open = gen << 2 | FS_PAIR_OPEN;
	uint32_t w = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
	for (;;) {
		if (w != open && !fs_older(w >> 2, gen & FS_GEN_MASK)) {
			return 0;
		}
		if (__atomic_compare_exchange_n(&m->state, &w, gen << 2 | FS_PAIR_ENDING, 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			break;
		}
	}
	((fsWriteTimestamp)fn)((void *)cmd, stage, pool, query);
	__atomic_store_n(&m->state, gen << 2 | FS_PAIR_ENDED, __ATOMIC_RELEASE);
	return 1;
}
