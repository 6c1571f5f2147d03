package main

import (
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
)

// TestRenderUnderGC renders while the garbage collector runs without a
// pause, finalizers included: every Vulkan call that reads memory must be
// reading memory no finalizer can free. vulkan-go's marshalling of slices
// fails this (freed create infos, submit infos, copy regions); the test
// fails on a crash, on a validation message (vktest) or on a wrong image.
func TestRenderUnderGC(t *testing.T) {
	cfg := testConfig(t, 200)
	cfg.inFlight = 2
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				_ = make([]byte, 64<<10) // garbage, so that freed memory is reused
			}
		}
	}()
	_, err := run(cfg, io.Discard)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, cfg.png)
}
