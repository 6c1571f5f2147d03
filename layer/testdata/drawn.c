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
// Each frame is also drawn bound by the CPU or the GPU, from a stream of
// its own (so that a seed's loop is the one it drew before): a "c" frame
// spins DRAWN_SPIN_MS (4) ms after its last wait, a "g" frame submits a
// fill of DRAWN_FILL_MIB (256) MiB with its last submission. The journal
// gives each frame's letter after its window, for the frames' verdicts.
//
//   drawn SEED JOURNAL
#include "vkprog.h"

static uint64_t rng;

static uint32_t draw_from(uint64_t *state, uint32_t n) { // splitmix64, 0 to n-1
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)((z ^ (z >> 31)) % n);
}

static uint32_t draw(uint32_t n) { return draw_from(&rng, n); }

// fill_cmd records, once, a fill of a buffer of mib MiB: a GPU-bound
// frame's work.
static VkCommandBuffer fill_cmd(instance *i, device *d, double mib, VkBuffer *buf, VkDeviceMemory *mem) {
	VkDeviceSize size = (VkDeviceSize)(mib * 1024 * 1024) & ~(VkDeviceSize)3;
	int host;
	*buf = buffer(i, d, size, mem, &host);
	VkCommandBuffer c;
	VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
					  .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
	CHECK(vkAllocateCommandBuffers(d->dev, &ai, &c));
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	CHECK(vkBeginCommandBuffer(c, &bi));
	// Barriers around the fill, as a program orders its transfers: lavapipe
	// also takes its timestamps at a barrier, and without one its zone's
	// begin would be taken after the fill.
	VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			      .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
	vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	vkCmdFillBuffer(c, *buf, 0, size, 0x5eed);
	vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	CHECK(vkEndCommandBuffer(c));
	return c;
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
	uint64_t bound_rng = rng ^ 0xB0B0B0B0ull;
	double spin_ms = env_or("DRAWN_SPIN_MS", 4);
	VkBuffer fbuf;
	VkDeviceMemory fmem;
	VkCommandBuffer fill = fill_cmd(&i, &d, env_or("DRAWN_FILL_MIB", 256), &fbuf, &fmem);
	int fills = 0;
	for (int f = 0; f < frames; f++) {
		int gpu_bound = draw_from(&bound_rng, 2);
		VkCommandBuffer cmds[MAXC + 1];
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
		if (gpu_bound) { // the fill goes with the last submission
			cmds[nc] = fill;
			fills++;
		}
		for (int k = 0; k < nc; k++) {
			int last = split ? k == nc - 1 : k == 0;
			if (split || k == 0)
				submit_wait(&d, &cmds[k], (split ? 1 : (uint32_t)nc) + (uint32_t)(last && gpu_bound));
		}
		fprintf(j, "window %.0f %.0f %c\n", t0, now_ns(), gpu_bound ? 'g' : 'c');
		if (!gpu_bound)
			spin(spin_ms);
	}
	for (int k = 0; k < NAMES; k++)
		if (total.n[k])
			fprintf(j, "zone %c%d %d\n", k < 8 ? 'L' : 'S', k % 8, total.n[k]);
	fprintf(j, "zone command-buffer %d\n", frames * nc + fills);
	fprintf(j, "zone render-pass %d\n", total.rp);
	int calls = 0;
	for (int k = 0; k < nc; k++)
		calls += s[k].calls;
	fprintf(j, "zone secondary-command-buffer %d\n", frames * calls);
	int unsubmitted = fills == 0; // the fill's command buffer, recorded and never run
	if (caller < 0) {             // the secondary likewise: its zones and its own
		unsubmitted++;
		for (int k = 0; k < NAMES; k++)
			unsubmitted += sec_made.n[k];
	}
	if (unsubmitted > 0)
		fprintf(j, "unsubmitted %d\n", unsubmitted);
	fclose(j);
	vkDeviceWaitIdle(d.dev);
	vkDestroyBuffer(d.dev, fbuf, NULL);
	vkFreeMemory(d.dev, fmem, NULL);
	destroy_target(&d, &g.t);
	destroy_device(&d);
	vkDestroyInstance(i.inst, NULL);
	return 0;
}
