// framescope_czones.h: the zone path of one recording (profiler.Recording)
// for C code in the same process, which records zones into the
// recording's command buffer itself, with no call into Go a zone.
// Recording.C returns a pointer to this struct; it stays valid until
// Recording.End, and only the thread recording the command buffer uses it
// (Vulkan synchronizes a command buffer's recording externally).
//
//	framescope_czones *z = ...; // from Recording.C, handed to C
//	int64_t pair = z->begin(z->slot, (uintptr_t)cmd, z->begin_stage, name);
//	if (pair < 0) { ... Zone, through Go: the recording has no query left ... }
//	// the commands the zone times
//	z->end(z->slot, (uint64_t)pair, (uintptr_t)cmd, z->end_stage, z->refused);
//
// name is a profiler.Name. A zone begun here ends here, in the same
// command buffer; zones nest as their begins and ends do.
#ifndef FRAMESCOPE_CZONES_H
#define FRAMESCOPE_CZONES_H

#include <stdint.h>

typedef struct framescope_czones {
	void *slot;         // the recording's queries and their books
	uint64_t *refused;  // the books of ends refused
	uint32_t begin_stage, end_stage; // GPUOptions.BeginStage and EndStage
	// begin records a zone's begin timestamp into cmd and returns its
	// pair, or a negative number when the zone must go through Go.
	int64_t (*begin)(void *slot, uintptr_t cmd, uint32_t stage, uint32_t name);
	// end records the end timestamp of pair into cmd.
	void (*end)(void *slot, uint64_t pair, uintptr_t cmd, uint32_t stage, uint64_t *refused);
} framescope_czones;

#endif
