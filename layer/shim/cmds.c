// Command buffers as the layer's C half knows them, and the zones it
// records into them itself: the library's zone path for C
// (framescope_czones, from the Go half once per recording) begins and
// ends a zone with no call into Go. A zone the path refuses, or one past
// FS_MAX_OPEN open at once, goes through Go instead.
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define BUCKETS 4096

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static fs_cmd *table[BUCKETS];
static fs_cmd *spare; // freed states: never given back, so that a stale cache still points at one

static FS_TLS fs_cmd *last; // the calling thread's last command buffer

static unsigned bucket(const void *cmd) { return (unsigned)(((uintptr_t)cmd >> 4) * 0x9E3779B97F4A7C15ull >> 52) % BUCKETS; }

void fs_cmd_add(fs_device *dev, void *cmd, uint64_t pool, int secondary) {
	pthread_rwlock_wrlock(&lock);
	fs_cmd *c = spare;
	if (c)
		spare = c->next;
	else
		c = calloc(1, sizeof *c);
	if (c) {
		memset(c, 0, sizeof *c);
		c->dev = dev;
		c->pool = pool;
		c->secondary = secondary;
		unsigned b = bucket(cmd);
		c->next = table[b];
		table[b] = c;
		__atomic_store_n(&c->cmd, cmd, __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&lock);
}

// unlink_locked takes c out of its bucket and onto the spares.
static void unlink_locked(fs_cmd *c) {
	fs_cmd **p = &table[bucket(c->cmd)];
	while (*p && *p != c)
		p = &(*p)->next;
	if (*p)
		*p = c->next;
	__atomic_store_n(&c->cmd, NULL, __ATOMIC_RELEASE);
	c->cz = NULL;
	c->next = spare;
	spare = c;
}

void fs_cmd_remove(void *cmd) {
	pthread_rwlock_wrlock(&lock);
	for (fs_cmd *c = table[bucket(cmd)]; c; c = c->next)
		if (c->cmd == cmd) {
			unlink_locked(c);
			break;
		}
	pthread_rwlock_unlock(&lock);
}

// remove_all forgets every command buffer of pool, or, with pool 0, of
// device dev.
static void remove_all(uint64_t pool, const fs_device *dev) {
	pthread_rwlock_wrlock(&lock);
	for (unsigned b = 0; b < BUCKETS; b++)
		for (fs_cmd *c = table[b], *next; c; c = next) {
			next = c->next;
			if (pool ? c->pool == pool : c->dev == dev)
				unlink_locked(c);
		}
	pthread_rwlock_unlock(&lock);
}

void fs_cmd_remove_pool(uint64_t pool) { remove_all(pool, NULL); }

// fs_cmd_remove_device forgets the command buffers a device left
// allocated at its destruction (a program may leave freeing them to the
// device's end), whose states would point at the device freed.
void fs_cmd_remove_device(fs_device *dev) { remove_all(0, dev); }

fs_cmd *fs_cmd_get(void *cmd) {
	fs_cmd *c = last;
	if (c && __atomic_load_n(&c->cmd, __ATOMIC_ACQUIRE) == cmd)
		return c;
	pthread_rwlock_rdlock(&lock);
	for (c = table[bucket(cmd)]; c && c->cmd != cmd; c = c->next) {
	}
	pthread_rwlock_unlock(&lock);
	if (c)
		last = c;
	return c;
}

void fs_cmd_begin(fs_cmd *c, void *cmd, uint32_t flags) {
	if (!c)
		return;
	c->depth = 0;
	memset(c->deeper, 0, sizeof c->deeper);
	c->cz = fs_go_loaded ? fs_go.cmd_begin(cmd, flags) : NULL;
	// A zone for the command buffer itself, which fs_cmd_end ends last.
	fs_zone_begin(c, cmd, NULL, c->secondary ? FS_ZONE_SECONDARY : FS_ZONE_COMMAND_BUFFER);
}

// end_at ends the open zone at index i and takes it off the stack.
static void end_at(fs_cmd *c, void *cmd, uint32_t i) {
	if (c->open[i].go)
		fs_go.zone_end(cmd, c->open[i].kind);
	else
		c->cz->end(c->cz->slot, (uint64_t)c->open[i].pair, (uintptr_t)cmd, c->cz->end_stage, c->cz->refused);
	if (i + 1 < c->depth) // a zone ended out of order: no call for the usual innermost
		memmove(&c->open[i], &c->open[i + 1], (c->depth - i - 1) * sizeof c->open[0]);
	c->depth--;
}

// fs_cmd_end ends the command buffer's own zone and those of its render
// passes; a label still open spans command buffers: it is left open, for
// the recording's end to carry (a primary's) or count (unended).
void fs_cmd_end(fs_cmd *c, void *cmd) {
	if (!fs_go_loaded)
		return;
	if (c) {
		while (c->depth > 0) {
			uint32_t top = c->depth - 1;
			int kind = c->open[top].kind;
			if (kind == FS_ZONE_LABEL || kind == FS_ZONE_MARKER)
				c->depth--;
			else
				end_at(c, cmd, top);
		}
		memset(c->deeper, 0, sizeof c->deeper);
		c->cz = NULL;
	}
	fs_go.cmd_end(cmd); // likewise for the zones open through Go, then the recording
}

void fs_zone_begin(fs_cmd *c, void *cmd, const char *label, int kind) {
	if (!fs_go_loaded)
		return;
	if (!c || c->depth == FS_MAX_OPEN) {
		if (c && kind > 0 && kind < FS_ZONE_KINDS)
			c->deeper[kind]++; // past the stack: through Go
		fs_go.zone_begin(cmd, label, kind);
		return;
	}
	int64_t pair = -1;
	if (c->cz) {
		uint32_t name = fs_name(label, kind);
		if (name != FS_NO_NAME)
			pair = c->cz->begin(c->cz->slot, (uintptr_t)cmd, c->cz->begin_stage, name);
	}
	c->open[c->depth].kind = kind;
	c->open[c->depth].go = pair < 0;
	c->open[c->depth].pair = pair;
	c->depth++;
	if (pair < 0)
		fs_go.zone_begin(cmd, label, kind);
}

// fs_zone_end ends the innermost open zone of kind: labels and render
// passes may interleave, zones may not. A primary's end of a label it
// has not begun ends one an earlier command buffer left open: Go finds it.
void fs_zone_end(fs_cmd *c, void *cmd, int kind) {
	if (!fs_go_loaded)
		return;
	if (!c) {
		fs_go.zone_end(cmd, kind);
		return;
	}
	if (kind > 0 && kind < FS_ZONE_KINDS && c->deeper[kind] > 0) {
		c->deeper[kind]--;
		fs_go.zone_end(cmd, kind);
		return;
	}
	for (uint32_t i = c->depth; i-- > 0;)
		if (c->open[i].kind == kind) {
			end_at(c, cmd, i);
			return;
		}
	if (kind == FS_ZONE_LABEL && !c->secondary)
		fs_go.zone_end(cmd, kind);
}
