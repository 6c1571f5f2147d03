// drawn.c: a render loop in C drawn from a seed, for the layer's checker
// (TestDrawnLoopsUnderLayer). It draws how many frames, command buffers a
// frame, which of them are recorded once and submitted every frame,
// trees of nested debug labels in each (some inside a render pass), a
// secondary recorded once and executed from a primary, submissions split
// or merged, command buffers freed and allocated again; it runs the loop,
// waiting for each frame, and writes its journal: each frame's window on
// CLOCK_MONOTONIC (before its first submission, after the wait for its
// last), how many zones of each name the GPU ran, and how many it
// recorded and never submitted (the secondary's, when no primary calls
// it). A label's name says
// the depth its zone must have: "L3" lies inside three zones (its command
// buffer's, and labels or a render pass around it); "S2" is one of the
// secondary's.
//
//   drawn SEED JOURNAL
#include "vkprog.h"

static uint64_t rng;

static uint32_t draw(uint32_t n) { // splitmix64, 0 to n-1
	uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)((z ^ (z >> 31)) % n);
}

// The zones one recording of a command buffer makes, by name.
#define NAMES 16
typedef struct {
	int n[NAMES]; // L0..L7, S0..S7
	int rp;       // render passes
} counts;

static int name_index(char kind, int depth) { return (kind == 'S' ? 8 : 0) + depth; }

static void add(counts *to, const counts *c) {
	for (int i = 0; i < NAMES; i++)
		to->n[i] += c->n[i];
	to->rp += c->rp;
}

typedef struct {
	device *d;
	target t;
} gfx;

// tree records a random tree of labels at depth (the zones around it),
// with a render pass around a subtree now and then where allowed.
static void tree(gfx *g, VkCommandBuffer cmd, int depth, int rp_ok, counts *c) {
	int kids = depth < 6 ? (int)draw(3) : 0;
	for (int k = 0; k < kids; k++) {
		if (rp_ok && draw(5) == 0) {
			VkClearValue clear = {0};
			VkRenderPassBeginInfo rb = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = g->t.rp, .framebuffer = g->t.fb,
						    .renderArea = {{0, 0}, {16, 16}}, .clearValueCount = 1, .pClearValues = &clear};
			vkCmdBeginRenderPass(cmd, &rb, VK_SUBPASS_CONTENTS_INLINE);
			c->rp++;
			tree(g, cmd, depth + 1, 0, c); // the render pass's zone is one deeper
			vkCmdEndRenderPass(cmd);
			continue;
		}
		char name[16];
		snprintf(name, sizeof name, "L%d", depth);
		VkCommandBuffer keep = g->d->cmd;
		g->d->cmd = cmd;
		label(g->d, name);
		g->d->cmd = keep;
		c->n[name_index('L', depth)]++;
		tree(g, cmd, depth + 1, rp_ok, c);
		g->d->end(cmd);
	}
}

static gfx make_gfx(instance *i, device *d) {
	gfx g = {.d = d};
	g.t = make_target(i, d, 16);
	return g;
}

static VkCommandBuffer alloc(device *d, VkCommandBufferLevel level) {
	VkCommandBuffer c;
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
					  .level = level, .commandBufferCount = 1};
	CHECK(vkAllocateCommandBuffers(d->dev, &ai, &c));
	return c;
}

#define MAXC 4

typedef struct {
	VkCommandBuffer cmd;
	int fixed;   // recorded once, submitted every frame
	int calls;   // executes the secondary
	counts made; // what one execution of a fixed one runs
} slot;

// record records a primary: its tree, and the secondary where it calls it.
static void record(gfx *g, slot *s, VkCommandBuffer sec, const counts *sec_made, counts *c) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
				       .flags = s->fixed ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	CHECK(vkBeginCommandBuffer(s->cmd, &bi));
	memset(c, 0, sizeof *c);
	tree(g, s->cmd, 1, 1, c);
	if (s->calls) {
		vkCmdExecuteCommands(s->cmd, 1, &sec);
		add(c, sec_made);
	}
	CHECK(vkEndCommandBuffer(s->cmd));
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: drawn SEED JOURNAL\n");
		return 2;
	}
	rng = strtoull(argv[1], NULL, 10);
	FILE *j = fopen(argv[2], "w");
	if (!j) {
		perror(argv[2]);
		return 2;
	}
	instance i = make_instance(VK_API_VERSION_1_2);
	device d = make_device(&i);
	gfx g = make_gfx(&i, &d);
	int frames = 3 + (int)draw(20), nc = 1 + (int)draw(MAXC);
	fprintf(j, "seed %s frames %d cmds %d\n", argv[1], frames, nc);

	// The secondary, recorded once: its labels one deeper than its own
	// zone, which lies inside its primary's command buffer zone.
	VkCommandBuffer sec = alloc(&d, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
	counts sec_made = {0};
	VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
	VkCommandBufferBeginInfo sbi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .pInheritanceInfo = &inh};
	CHECK(vkBeginCommandBuffer(sec, &sbi));
	for (int k = 0, n = 1 + (int)draw(3); k < n; k++) {
		VkCommandBuffer keep = d.cmd;
		d.cmd = sec;
		label(&d, "S2");
		d.end(sec);
		d.cmd = keep;
		sec_made.n[name_index('S', 2)]++;
	}
	CHECK(vkEndCommandBuffer(sec));

	// One primary at most executes the secondary: one without the
	// simultaneous-use flag belongs to the primary that executed it last.
	slot s[MAXC];
	counts total = {0};
	int caller = draw(2) ? (int)draw((uint32_t)nc) : -1;
	for (int k = 0; k < nc; k++) {
		s[k] = (slot){.cmd = alloc(&d, VK_COMMAND_BUFFER_LEVEL_PRIMARY), .fixed = draw(3) == 0, .calls = k == caller};
		if (s[k].fixed)
			record(&g, &s[k], sec, &sec_made, &s[k].made);
	}
	for (int f = 0; f < frames; f++) {
		VkCommandBuffer cmds[MAXC];
		for (int k = 0; k < nc; k++) {
			if (!s[k].fixed && draw(5) == 0) { // freed and made again
				vkFreeCommandBuffers(d.dev, d.pool, 1, &s[k].cmd);
				s[k].cmd = alloc(&d, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
			}
			counts c;
			if (s[k].fixed)
				c = s[k].made;
			else
				record(&g, &s[k], sec, &sec_made, &c);
			add(&total, &c);
			cmds[k] = s[k].cmd;
		}
		double t0 = now_ns();
		int split = draw(2);
		for (int k = 0; k < nc; k++) {
			if (split || k == 0)
				submit_wait(&d, &cmds[k], split ? 1 : (uint32_t)nc);
		}
		fprintf(j, "window %.0f %.0f\n", t0, now_ns());
	}
	for (int k = 0; k < NAMES; k++)
		if (total.n[k])
			fprintf(j, "zone %c%d %d\n", k < 8 ? 'L' : 'S', k % 8, total.n[k]);
	fprintf(j, "zone command-buffer %d\n", frames * nc);
	fprintf(j, "zone render-pass %d\n", total.rp);
	int calls = 0;
	for (int k = 0; k < nc; k++)
		calls += s[k].calls;
	fprintf(j, "zone secondary-command-buffer %d\n", frames * calls);
	if (caller < 0) { // the secondary, recorded and never run: its zones and its own
		int n = 1;
		for (int k = 0; k < NAMES; k++)
			n += sec_made.n[k];
		fprintf(j, "unsubmitted %d\n", n);
	}
	fclose(j);
	vkDeviceWaitIdle(d.dev);
	destroy_target(&d, &g.t);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	return 0;
}
