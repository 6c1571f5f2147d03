// Zone names: a label's profiler.Name, asked of the Go half once per
// distinct label and kept here, so that a labelled region costs no call
// into Go. At most FS_MAX_NAMES are kept; past them the Go half is asked
// each time (it names them all "(other labels)").
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define NAME_BUCKETS 1024
#define FS_MAX_NAMES 4096

typedef struct fs_name {
	uint64_t hash;
	uint32_t id;
	struct fs_name *next;
	char s[];
} fs_name_t;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static fs_name_t *table[NAME_BUCKETS];
static int count;
static uint32_t kinds[16]; // the names of the zones that are no label, by kind; 0: not asked yet

// Each thread keeps the names of the labels it saw last, by the label's
// address, checked against the text (the same address may hold another
// label later): most programs label with the same strings every frame.
#define RECENT 64
typedef struct {
	const char *p;
	fs_name_t *e;
} recent_t;
static FS_TLS recent_t *recent; // RECENT entries, made at the thread's first label
static pthread_key_t recent_key;
static pthread_once_t recent_once = PTHREAD_ONCE_INIT;

// recent_free frees the exiting thread's entries, and forgets them: a
// later destructor on the thread that labels makes them again.
static void recent_free(void *p) {
	recent = NULL;
	free(p);
}

static void recent_init(void) {
	if (pthread_key_create(&recent_key, recent_free) != 0)
		recent_key = (pthread_key_t)-1;
}

// recent_of returns the calling thread's entries, or NULL where none can
// be made (the lookup then goes to the table each time).
static recent_t *recent_of(void) {
	if (__builtin_expect(recent != NULL, 1))
		return recent;
	pthread_once(&recent_once, recent_init);
	recent_t *r = calloc(RECENT, sizeof *r);
	if (!r)
		return NULL;
	if (recent_key == (pthread_key_t)-1 || pthread_setspecific(recent_key, r) != 0) {
		free(r); // never freed at the thread's exit: not kept
		return NULL;
	}
	return recent = r;
}

static unsigned recent_slot(const char *p) { return (unsigned)(((uintptr_t)p >> 3) * 0x9E3779B97F4A7C15ull >> 58) % RECENT; }

static uint64_t fnv(const char *s, size_t *n) {
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = s;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	*n = (size_t)(p - s);
	return h;
}

uint32_t fs_name(const char *label, int kind) {
	if (kind != FS_ZONE_LABEL && kind != FS_ZONE_MARKER) {
		uint32_t id = __atomic_load_n(&kinds[kind], __ATOMIC_ACQUIRE);
		if (!id) {
			id = fs_go.name(NULL, kind);
			__atomic_store_n(&kinds[kind], id, __ATOMIC_RELEASE);
		}
		return id;
	}
	if (!label)
		return fs_go.name(NULL, kind);
	recent_t *rc = recent_of(), *slot = rc ? &rc[recent_slot(label)] : NULL;
	if (slot && slot->p == label && strcmp(slot->e->s, label) == 0)
		return slot->e->id;
	size_t n;
	uint64_t h = fnv(label, &n);
	unsigned b = (unsigned)(h % NAME_BUCKETS);
	pthread_rwlock_rdlock(&lock);
	for (fs_name_t *e = table[b]; e; e = e->next)
		if (e->hash == h && strcmp(e->s, label) == 0) {
			pthread_rwlock_unlock(&lock);
			if (slot) {
				slot->p = label;
				slot->e = e; // entries are never freed
			}
			return e->id;
		}
	int full = count >= FS_MAX_NAMES;
	pthread_rwlock_unlock(&lock);
	uint32_t id = fs_go.name(label, kind);
	if (full || id == FS_NO_NAME)
		return id;
	fs_name_t *e = malloc(sizeof *e + n + 1);
	if (!e)
		return id;
	e->hash = h;
	e->id = id;
	memcpy(e->s, label, n + 1);
	pthread_rwlock_wrlock(&lock);
	e->next = table[b];
	table[b] = e;
	count++;
	pthread_rwlock_unlock(&lock);
	return id;
}
