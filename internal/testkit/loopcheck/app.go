package loopcheck

/*
#cgo LDFLAGS: -lvulkan
#include <stdlib.h>
#include "app.h"
*/
import "C"

import (
	"cmp"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// app is the checker's application: a Vulkan instance and device made in
// C (app.c), its queues, and what a frame needs.
type app struct {
	c          *C.lc_app
	name       string
	queues     []appQueue
	hostReset  bool
	calibrated bool
	debugUtils bool
	// pipelineStats: pipelineStatisticsQuery is enabled, and dispatch
	// runs the count pipeline.
	pipelineStats bool
	// What the device offers and the application enabled: timeline
	// semaphores, synchronization2 (submissions and barriers go through
	// it once useSync2 says so), dynamic rendering.
	timeline, sync2, rendering bool
}

// countSPIRV is the demo's count.comp (internal/cmd/demo/shaders): a
// workgroup of 64 invocations. TestCountShaderIsTheDemos keeps the copy
// the same.
//
//go:embed count.comp.spv
var countSPIRV []byte

// countGroup is count.comp's workgroup size.
const countGroup = 64

// appQueue is one queue the application made.
type appQueue struct {
	family, index, flags, validBits uint32
	c                               C.VkQueue
}

// Flags of VkQueueFlags.
const (
	queueGraphics = 1
	queueCompute  = 2
	queueTransfer = 4
)

// appConfig is what the application enables.
type appConfig struct {
	validation, hostReset, calibrated bool
	queues                            int    // per family
	device                            string // a substring of the device's name
	pipelineStats                     bool   // enable pipelineStatisticsQuery where offered
	api10                             bool   // an instance of Vulkan 1.0
	// Enable timeline semaphores, synchronization2 and dynamic rendering
	// where offered.
	modern bool
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func newApp(cfg appConfig) (*app, error) {
	C.lc_pin()
	cc := C.lc_config{validation: cbool(cfg.validation), host_reset: cbool(cfg.hostReset),
		calibrated: cbool(cfg.calibrated), queues: C.int(cfg.queues), pipeline_stats: cbool(cfg.pipelineStats),
		api10: cbool(cfg.api10), timeline: cbool(cfg.modern), sync2: cbool(cfg.modern), rendering: cbool(cfg.modern)}
	// The words, in C memory: lc_create keeps a copy for a device made again.
	words := C.malloc(C.size_t(len(countSPIRV)))
	defer C.free(words)
	w := unsafe.Slice((*uint32)(words), len(countSPIRV)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(countSPIRV[4*i:])
	}
	cc.count_spirv, cc.count_words = (*C.uint32_t)(words), C.size_t(len(w))
	if cfg.device != "" {
		cc.device = C.CString(cfg.device)
		defer C.free(unsafe.Pointer(cc.device))
	}
	var errBuf [512]C.char
	var a *C.lc_app
	if rc := C.lc_create(&cc, &a, &errBuf[0], C.size_t(len(errBuf))); rc != 0 {
		return nil, fmt.Errorf("loopcheck: %s", C.GoString(&errBuf[0]))
	}
	x := &app{c: a, name: C.GoString(C.lc_device_name(a))}
	x.load()
	return x, nil
}

// load reads what the device was made with.
func (a *app) load() {
	a.hostReset = C.lc_has_host_reset(a.c) != 0
	a.queues = a.queues[:0]
	for i := range int(C.lc_queue_count(a.c)) {
		q := C.lc_queue_at(a.c, C.int(i))
		a.queues = append(a.queues, appQueue{family: uint32(q.family), index: uint32(q.index),
			flags: uint32(q.flags), validBits: uint32(q.valid_bits), c: q.queue})
	}
	// One queue of each family first, then the second of each: a loop
	// that profiles a few queues gets different families (graphics,
	// compute, transfer) before two of one.
	slices.SortStableFunc(a.queues, func(x, y appQueue) int { return cmp.Compare(x.index, y.index) })
	if !a.hostReset {
		// Without host query reset, transfer-only queues cannot reset
		// their queries (the profiler refuses them): the application
		// profiles the others.
		a.queues = slices.DeleteFunc(a.queues, func(q appQueue) bool { return q.flags&(queueGraphics|queueCompute) == 0 })
	}
	a.calibrated = C.lc_has_calibrated(a.c) != 0
	a.debugUtils = C.lc_has_debug_utils(a.c) != 0
	a.pipelineStats = C.lc_has_pipeline_stats(a.c) != 0
	a.timeline = C.lc_has_timeline(a.c) != 0
	a.sync2 = C.lc_has_sync2(a.c) != 0
	a.rendering = C.lc_has_rendering(a.c) != 0
}

// useSync2 makes submissions and barriers go through synchronization2
// (vkQueueSubmit2KHR, vkCmdPipelineBarrier2KHR), where enabled; for the
// device made again too.
func (a *app) useSync2(on bool) { C.lc_use_sync2(a.c, cbool(on)) }

// remakeDevice destroys the device and makes a new one on the same
// instance: every object made on the old one must be gone.
func (a *app) remakeDevice() error {
	C.lc_destroy_device(a.c)
	var errBuf [512]C.char
	if rc := C.lc_create_device(a.c, &errBuf[0], C.size_t(len(errBuf))); rc != 0 {
		return fmt.Errorf("loopcheck: %s", C.GoString(&errBuf[0]))
	}
	a.load()
	return nil
}

func (a *app) destroy() { C.lc_destroy(a.c) }

// apiVersion is the instance's apiVersion, as the application tells the
// profiler (Existing.APIVersion).
func (a *app) apiVersion() uint32 { return uint32(C.lc_api_version(a.c)) }

// The handles the profiler takes, as an application that made its
// objects in C passes them: Vulkan's dispatchable handles are pointers,
// and vulkan-go's types hold the same pointers.
func (a *app) instance() vkg.Instance { return vkg.Instance(unsafe.Pointer(C.lc_instance(a.c))) }
func (a *app) physical() vkg.PhysicalDevice {
	return vkg.PhysicalDevice(unsafe.Pointer(C.lc_physical(a.c)))
}
func (a *app) device() vkg.Device                     { return vkg.Device(unsafe.Pointer(C.lc_device(a.c))) }
func (q appQueue) handle() vkg.Queue                  { return vkg.Queue(unsafe.Pointer(q.c)) }
func cmdHandle(c C.VkCommandBuffer) vkg.CommandBuffer { return vkg.CommandBuffer(unsafe.Pointer(c)) }

// The application's own objects.
type (
	cmdPool   struct{ c C.VkCommandPool }
	cmdBuf    struct{ c C.VkCommandBuffer }
	fence     struct{ c C.VkFence }
	semaphore struct{ c C.VkSemaphore }
)

var errVulkan = errors.New("loopcheck: a Vulkan call failed")

func vkErr(what string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: VkResult %d", errVulkan, what, int(rc))
}

func (a *app) pool(family uint32) (cmdPool, error) {
	p := C.lc_create_pool(a.c, C.uint32_t(family))
	if p == nil {
		return cmdPool{}, fmt.Errorf("%w: vkCreateCommandPool", errVulkan)
	}
	return cmdPool{p}, nil
}

func (a *app) destroyPool(p cmdPool) { C.lc_destroy_pool(a.c, p.c) }
func (a *app) resetPool(p cmdPool) error {
	return vkErr("vkResetCommandPool", C.lc_reset_pool(a.c, p.c))
}

func (a *app) alloc(p cmdPool, secondary bool) (cmdBuf, error) {
	c := C.lc_alloc_cmd(a.c, p.c, cbool(secondary))
	if c == nil {
		return cmdBuf{}, fmt.Errorf("%w: vkAllocateCommandBuffers", errVulkan)
	}
	return cmdBuf{c}, nil
}

func (c cmdBuf) begin(secondary bool) error {
	return vkErr("vkBeginCommandBuffer", C.lc_begin_cmd(c.c, cbool(secondary)))
}
func (c cmdBuf) beginReusable(secondary, simultaneous bool) error {
	if simultaneous {
		return vkErr("vkBeginCommandBuffer", C.lc_begin_simultaneous(c.c, boolInt(secondary)))
	}
	if secondary {
		return vkErr("vkBeginCommandBuffer", C.lc_begin_reusable_secondary(c.c))
	}
	return vkErr("vkBeginCommandBuffer", C.lc_begin_reusable(c.c))
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
func (c cmdBuf) end() error                { return vkErr("vkEndCommandBuffer", C.lc_end_cmd(c.c)) }
func (c cmdBuf) handle() vkg.CommandBuffer { return cmdHandle(c.c) }

// execute records vkCmdExecuteCommands of up to 4 secondaries.
func (c cmdBuf) execute(secs []cmdBuf) {
	var s [4]C.VkCommandBuffer
	for i := range min(len(secs), 4) {
		s[i] = secs[i].c
	}
	C.lc_execute(c.c, C.uint32_t(min(len(secs), 4)), s[0], s[1], s[2], s[3])
}

func (a *app) fill(c cmdBuf, offset uint64, value uint32, barrier bool) {
	C.lc_fill(a.c, c.c, C.uint64_t(offset), C.uint32_t(value), cbool(barrier))
}

// dispatch records groups workgroups of the count pipeline into c.
func (a *app) dispatch(c cmdBuf, groups uint32) { C.lc_dispatch(a.c, c.c, C.uint32_t(groups)) }

func workSize() uint64 { return uint64(C.lc_work_size()) }

func (a *app) fence() fence                 { return fence{C.lc_create_fence(a.c)} }
func (a *app) destroyFence(f fence)         { C.lc_destroy_fence(a.c, f.c) }
func (a *app) semaphore() semaphore         { return semaphore{C.lc_create_semaphore(a.c)} }
func (a *app) destroySemaphore(s semaphore) { C.lc_destroy_semaphore(a.c, s.c) }
func (a *app) waitIdle() error              { return vkErr("vkDeviceWaitIdle", C.lc_wait_idle(a.c)) }
func (a *app) wait(f fence, timeout int64) error {
	return vkErr("vkWaitForFences", C.lc_wait_fence(a.c, f.c, C.uint64_t(timeout)))
}

// sync is what a submission waits for and signals: semaphores (nil: none)
// with their timeline values (0: binary), and a fence (nil: none).
type batchSync struct {
	wait, signal     semaphore
	waitAt, signalAt uint64
	fence            fence
}

// submit submits cmds in one batch on q.
func (a *app) submit(q appQueue, cmds []cmdBuf, s batchSync) error {
	var cs [8]C.VkCommandBuffer
	for i := range min(len(cmds), 8) {
		cs[i] = cmds[i].c
	}
	return vkErr("vkQueueSubmit", C.lc_submit(a.c, q.c, C.uint32_t(min(len(cmds), 8)), &cs[0],
		s.wait.c, C.uint64_t(s.waitAt), s.signal.c, C.uint64_t(s.signalAt), s.fence.c))
}

// timelineSemaphore makes a timeline semaphore at 0.
func (a *app) timelineSemaphore() semaphore { return semaphore{C.lc_create_timeline(a.c)} }

// waitTimeline waits until s reaches value.
func (a *app) waitTimeline(s semaphore, value uint64, timeout int64) error {
	return vkErr("vkWaitSemaphores", C.lc_wait_timeline(a.c, s.c, C.uint64_t(value), C.uint64_t(timeout)))
}

// beginRendering and endRendering record a dynamic rendering instance
// with no attachments around what c records between them.
func (a *app) beginRendering(c cmdBuf) { C.lc_begin_rendering(a.c, c.c) }
func (a *app) endRendering(c cmdBuf)   { C.lc_end_rendering(a.c, c.c) }

// messages returns the validation layer's warnings and errors so far in
// the process, and the latest.
func messages() (uint64, string) {
	var buf [2048]C.char
	n := C.lc_messages(&buf[0], C.size_t(len(buf)))
	return uint64(n), C.GoString(&buf[0])
}
