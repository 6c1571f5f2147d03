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
// never freed: a thread's exit leaves its record to the next thread that
// records a zone, so there are at most as many as threads alive at once.
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
static __thread fsReader *fs_me __attribute__((tls_model("initial-exec"))); // one load a read, in a library loaded at run time too
static pthread_key_t fs_key;
static int fs_fence = 1; // readers fence: no membarrier (set once, before any reader)
static int fs_ready;
static pthread_mutex_t fs_sync_mu = PTHREAD_MUTEX_INITIALIZER; // one fs_guard_sync at a time

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
// reports whether readers go without a fence; with fence set they fence
// even where membarrier works.
int fs_guard_init(int fence) {
	if (pthread_key_create(&fs_key, fs_release) != 0) {
		return -1;
	}
	int want = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
	int have = fs_membarrier(MEMBARRIER_CMD_QUERY);
	if (!fence && have >= 0 && (have & want) == want && fs_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
		fs_fence = 0;
	}
	__atomic_store_n(&fs_ready, 1, __ATOMIC_RELEASE);
	return !fs_fence;
}

// fs_register gives the calling thread a record: a free one, else a new
// one pushed on the list. NULL when none could be made.
static __attribute__((noinline, cold)) fsReader *fs_register(void) {
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

// fs_guard_records returns how many thread records exist, and in *used
// how many a live thread holds.
int fs_guard_records(int *used) {
	int n = 0;
	*used = 0;
	for (fsReader *r = __atomic_load_n(&fs_readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		n++;
		*used += __atomic_load_n(&r->used, __ATOMIC_ACQUIRE) != 0;
	}
	return n;
}

// fs_guard_sync returns once no thread is inside a Begin that began
// before it was called. The caller has changed a slot's state with a
// sequentially consistent store: a Begin after this call sees it.
//
// Only threads that began a zone since the last call can be inside one. A
// Begin sets its busy word, then reads its active word, and where that is
// clear sets it with a full barrier before it reads a slot's state; this
// call clears the active words before it looks at the busy ones, and calls
// membarrier only where another thread's was set (where one thread records
// every zone, or none did, it needs none). So a Begin that read its active
// word set before a call cleared it had set its busy word first: the call's
// membarrier makes that visible and the call waits for the Begin. A Begin
// that read it clear set it with a barrier: a later call sees it set, or
// the Begin sees that call's state. Calls are serialized (fs_sync_mu), so
// that one never clears a word another is relying on.
void fs_guard_sync(void) {
	pthread_mutex_lock(&fs_sync_mu);
	int others = 0;
	for (fsReader *r = __atomic_load_n(&fs_readers, __ATOMIC_ACQUIRE); r; r = r->next) {
		if (__atomic_load_n(&r->active, __ATOMIC_ACQUIRE) && __atomic_exchange_n(&r->active, 0, __ATOMIC_SEQ_CST) && r != fs_me) {
			others = 1;
		}
	}
	if (others) {
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
	pthread_mutex_unlock(&fs_sync_mu);
}

// fs_enter marks the calling thread, whose record is r, inside a Begin or
// an End, before it reads a pair's or a slot's state; fs_leave marks it
// out once it wrote what it does (see fs_guard_sync).
static inline void fs_enter(fsReader *r) {
	__atomic_store_n(&r->busy, 1, __ATOMIC_RELAXED);
	if (fs_fence) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} else {
		__atomic_signal_fence(__ATOMIC_SEQ_CST); // membarrier orders the store before the loads
	}
	if (!__atomic_load_n(&r->active, __ATOMIC_RELAXED)) {
		__atomic_store_n(&r->active, 1, __ATOMIC_SEQ_CST); // a full barrier, once per fs_guard_sync
	}
}

static inline void fs_leave(fsReader *r) { __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE); }

// fs_cursor_hash is where cmd's cursor is first looked for.
static inline uint32_t fs_cursor_hash(uint64_t cmd) { return (uint32_t)(((cmd >> 4) * 0x9E3779B97F4A7C15ull) >> 58); }

// fs_cursor_probe returns the slot's cursor of command buffer cmd, taking
// a free one on its first zone in the frame; NULL when the probe finds
// neither. fs_cursor looks where the probe starts first: a command
// buffer's later zones find it there, unless another took that place.
static __attribute__((noinline)) fsCursor *fs_cursor_probe(fsCursor *cs, uint64_t cmd) {
	uint32_t h = fs_cursor_hash(cmd);
	for (uint32_t i = 0; i < FS_CURSOR_PROBES; i++) {
		fsCursor *c = &cs[(h + i) & (FS_CURSORS - 1)];
		uint64_t k = __atomic_load_n(&c->cmd, __ATOMIC_ACQUIRE);
		if (k == 0 && __atomic_compare_exchange_n(&c->cmd, &k, cmd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			return c;
		}
		if (k == cmd) { // a failed exchange left k the command buffer that took it
			return c;
		}
	}
	return NULL;
}

static inline __attribute__((always_inline)) fsCursor *fs_cursor(fsCursor *cs, uint64_t cmd) {
	fsCursor *c = &cs[fs_cursor_hash(cmd)];
	if (__builtin_expect(__atomic_load_n(&c->cmd, __ATOMIC_ACQUIRE) == cmd, 1)) {
		return c;
	}
	return fs_cursor_probe(cs, cmd);
}

// fs_claim takes up to want queries (even) of the slot's first block: it
// returns the first, with *got, or -1 when fewer than two are left.
static int64_t fs_claim(fsSlotHot *s, uint32_t want, uint32_t *got) {
	uint32_t n = __atomic_load_n(&s->next, __ATOMIC_RELAXED);
	for (;;) {
		if ((uint64_t)n + 2 > s->cap) {
			return -1;
		}
		uint32_t take = s->cap - n < want ? (s->cap - n) & ~1u : want;
		if (__atomic_compare_exchange_n(&s->next, &n, n + take, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			*got = take;
			return n;
		}
	}
}

// fs_take returns the query of the pair a Begin hands out: the next of
// cmd's cursor c, which first takes its next block of the slot where it
// has none left, or, with no cursor, a pair of the slot itself; -1 when
// the slot's first block has none left.
static __attribute__((noinline)) int64_t fs_take(fsSlotHot *s, fsCursor *c) {
	uint32_t got;
	if (!c) {
		return fs_claim(s, 2, &got);
	}
	uint32_t want = c->grow ? c->grow : 2;
	int64_t first = fs_claim(s, want, &got);
	if (first < 0) {
		return -1;
	}
	c->next = (uint32_t)first + 2;
	c->end = (uint32_t)first + got;
	c->grow = want < FS_CURSOR_BLOCK ? 2 * want : want;
	return first;
}

// fs_cursors and fs_meta return the slot's cursors and its first block's
// pair records, which lie on either side of its fsSlotHot.
static inline fsCursor *fs_cursors(fsSlotHot *s) { return (fsCursor *)s - FS_CURSORS; }
static inline fsPairMeta *fs_meta(fsSlotHot *s) { return (fsPairMeta *)(s + 1); }

// zone_begin hands out a pair of the slot's first block and records its
// begin timestamp into cmd. The pair comes from cmd's cursor, which takes
// blocks of 2, 4, ... FS_CURSOR_BLOCK queries (one atomic a block), or,
// where the slot has no cursor left for cmd, from the slot itself. It
// returns gen<<32 | query, or FS_BEGIN_NOFRAME, or FS_BEGIN_SLOW for Go's
// path (no query left in the first block, or a thread without a record):
// it never takes a pair it does not record or leave in a cursor.
static inline __attribute__((always_inline)) int64_t zone_begin(fsSlotHot *s, uintptr_t cmd, uint32_t stage, uint32_t name) {
	fsReader *r = fs_me;
	if (__builtin_expect(!r, 0) && !(r = fs_register())) {
		return FS_BEGIN_SLOW;
	}
	fs_enter(r);
	int64_t res = FS_BEGIN_NOFRAME;
	if (__builtin_expect(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == FS_SLOT_RECORDING, 1)) {
		res = FS_BEGIN_SLOW; // the cursors' pairs are Go's (Pool.spare), or none is left
		if (__atomic_load_n(&s->frozen, __ATOMIC_RELAXED)) {
			goto out;
		}
		fsCursor *c = fs_cursor(fs_cursors(s), (uint64_t)cmd);
		int64_t q;
		if (__builtin_expect(c && c->next != c->end, 1)) {
			q = c->next;
			c->next = (uint32_t)q + 2;
		} else if ((q = fs_take(s, c)) < 0) {
			goto out;
		}
		fsPairMeta *m = &fs_meta(s)[q / 2];
		m->name = name;
		m->cmd = (uint64_t)cmd;
		uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
		((fsWriteTimestamp)s->fn)((void *)cmd, stage, s->pool, (uint32_t)q);
		res = (int64_t)gen << 32 | q;
	}
out:
	fs_leave(r);
	return res;
}

// fs_zone_begin is Begin's one cgo call: zone_begin, its result returned
// as cgo returns one. (Writing it to a word of the caller's Go stack whose
// address came as an integer saved cgo's result its two calls into Go's
// runtime, but a goroutine's stack may move at the cgo wrapper's entry,
// before the call: grown, or shrunk by the collector. The word the C half
// then wrote was no longer the caller's, and the Begin read its old
// value.)
int64_t fs_zone_begin(fsSlotHot *s, uintptr_t cmd, uint32_t stage, uint32_t name) {
	return zone_begin(s, cmd, stage, name);
}

#define FS_GEN_MASK ((1u << FS_GEN_BITS) - 1)

static inline int older(uint32_t w, uint32_t g) {
	uint32_t d = (g - w) & FS_GEN_MASK;
	return d != 0 && d < (1u << (FS_GEN_BITS - 1));
}

int fs_older(uint32_t w, uint32_t g) { return older(w, g); }

// fs_end_open reports whether a pair whose state word is w may be ended
// by an End of generation gen: open in gen, or a word of an earlier one.
static inline int fs_end_open(uint32_t w, uint32_t gen) {
	return w == (gen << FS_STATE_BITS | FS_PAIR_OPEN) || older(w >> FS_STATE_BITS, gen & FS_GEN_MASK);
}

static int zone_end_elsewhere(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, uintptr_t fn);
static int zone_end_refused(fsPairMeta *m, uint32_t gen, fsSlotHot *s, uint64_t *refused);

// zone_end_books ends the pair whose record is m, handed out in
// generation gen in slot s: it takes it from open to ending, records its
// end timestamp into cmd and marks it ended, and returns 1; or, where the
// pair is not open in gen (ended already, given up, or its slot
// recycled), counts the End in refused[FS_END_MISUSE] (ended already, in
// its generation) or refused[FS_END_LATE] and returns 0. An End in
// another command buffer than its pair's notes so on the slot (elsewhere).
//
// An End in the command buffer that began the pair, by a thread with a
// guard record, takes it with plain stores inside the guard: any other
// End of the pair in that command buffer is ordered with it by the
// application (Vulkan has one thread record a command buffer at a time),
// and whatever else changes the pair's state, an End in another command
// buffer or a reader giving it up, changes it first and then waits
// (fs_guard_sync) for every End that may have read it open. Such an End
// (zone_end_elsewhere) takes the pair with a compare-and-swap, waits so,
// and records its timestamp only if the pair is still the one it took.
static inline __attribute__((always_inline)) int zone_end_books(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool,
	uint32_t query, fsSlotHot *s, uint64_t *refused) {
	uintptr_t fn = s->fn;
	fsReader *r = fs_me;
	if (r && __atomic_load_n(&m->cmd, __ATOMIC_RELAXED) == (uint64_t)cmd) {
		fs_enter(r);
		if (!fs_end_open(__atomic_load_n(&m->state, __ATOMIC_RELAXED), gen)) {
			fs_leave(r);
			return zone_end_refused(m, gen, s, refused);
		}
		__atomic_store_n(&m->state, gen << FS_STATE_BITS | FS_PAIR_ENDING, __ATOMIC_RELAXED);
		((fsWriteTimestamp)fn)((void *)cmd, stage, pool, query);
		__atomic_store_n(&m->state, gen << FS_STATE_BITS | FS_PAIR_ENDED, __ATOMIC_RELEASE);
		fs_leave(r);
		return 1;
	}
	if (!zone_end_elsewhere(m, gen, cmd, stage, pool, query, fn)) {
		return zone_end_refused(m, gen, s, refused);
	}
	if (__atomic_load_n(&m->cmd, __ATOMIC_RELAXED) != (uint64_t)cmd && !__atomic_load_n(&s->elsewhere, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->elsewhere, 1, __ATOMIC_SEQ_CST);
	}
	return 1;
}

// zone_end_elsewhere is zone_end_books's path for an End in another command
// buffer than its pair's, or by a thread without a guard record.
static __attribute__((noinline, cold)) int zone_end_elsewhere(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool,
	uint32_t query, uintptr_t fn) {
	uint32_t ending = gen << FS_STATE_BITS | FS_PAIR_ENDING;
	uint32_t w = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
	for (;;) {
		if (!fs_end_open(w, gen)) {
			return 0;
		}
		if (__atomic_compare_exchange_n(&m->state, &w, ending, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			break;
		}
	}
	// An End in the pair's own command buffer that read it open before
	// the exchange has marked it ended once this returns.
	fs_guard_sync();
	if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) != ending) {
		return 0;
	}
	((fsWriteTimestamp)fn)((void *)cmd, stage, pool, query);
	__atomic_store_n(&m->state, gen << FS_STATE_BITS | FS_PAIR_ENDED, __ATOMIC_RELEASE);
	return 1;
}

// zone_end_refused counts a refused End by its cause and returns 0.
static __attribute__((noinline, cold)) int zone_end_refused(fsPairMeta *m, uint32_t gen, fsSlotHot *s, uint64_t *refused) {
	uint32_t w = __atomic_load_n(&m->state, __ATOMIC_SEQ_CST);
	int misuse = w >> FS_STATE_BITS == (gen & FS_GEN_MASK) && (w & ((1u << FS_STATE_BITS) - 1)) != FS_PAIR_VOID &&
		__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) == gen && __atomic_load_n(&s->state, __ATOMIC_SEQ_CST) != FS_SLOT_DEAD;
	__atomic_fetch_add(&refused[misuse ? FS_END_MISUSE : FS_END_LATE], 1, __ATOMIC_SEQ_CST);
	return 0;
}

// fs_zone_end is End's one cgo call: zone_end_books, reporting whether it
// recorded. fs_zone_end_quiet is the same for a caller that needs no
// answer, which spares the call a result (see fs_zone_begin);
// fs_zone_end_first is fs_zone_end_quiet for a pair of the slot's first
// block, found from the slot: pair is gen<<32 | query.
int fs_zone_end(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, fsSlotHot *s, uint64_t *refused) {
	return zone_end_books(m, gen, cmd, stage, pool, query, s, refused);
}

void fs_zone_end_quiet(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, fsSlotHot *s,
	uint64_t *refused) {
	zone_end_books(m, gen, cmd, stage, pool, query, s, refused);
}

void fs_zone_end_first(fsSlotHot *s, uint64_t pair, uintptr_t cmd, uint32_t stage, uint64_t *refused) {
	uint32_t q = (uint32_t)pair;
	zone_end_books(&fs_meta(s)[q / 2], (uint32_t)(pair >> 32), cmd, stage, s->pool, q + 1, s, refused);
}

// fs_noop_timestamp has vkCmdWriteTimestamp's signature and does nothing:
// the stand-in for the driver in the benchmark that times the zone path
// alone; fs_call_timestamp calls fn as that benchmark's floor does.
void fs_noop_timestamp(void *cmd, uint32_t stage, uint64_t pool, uint32_t query) {
	(void)cmd, (void)stage, (void)pool, (void)query;
}

void fs_call_timestamp(uintptr_t fn, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query) {
	((fsWriteTimestamp)fn)((void *)cmd, stage, pool, query);
}
