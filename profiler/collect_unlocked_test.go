package profiler

import (
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// TestSubmitWhileConverting: a collection converting what it read holds
// nothing Submit needs. Under the layer, Submit runs inside the program's
// vkQueueSubmit while the layer's goroutine converts thousands of zones; a
// Submit that waited for them made about 1 frame in 100 several times
// slower. The conversion is held here until Submit has returned.
func TestSubmitWhileConverting(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{})
	zone := r.p.Name("z")
	for range 2 {
		r.frame(func(cmd vkg.CommandBuffer) { r.g.Zone(cmd, zone).End() })
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	testHookConverting = func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	defer func() { testHookConverting = nil }()
	collected := make(chan error, 1)
	go func() {
		_, err := r.g.Drain(nil)
		collected <- err
	}()
	<-entered
	submitted := r.submitAside()
	select {
	case <-submitted:
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("Submit waited for a conversion to end")
	}
	close(release)
	if err := <-collected; err != nil {
		t.Fatal(err)
	}
	if s := r.g.Stats(); !s.Balanced() {
		t.Fatalf("books do not balance: %+v", s)
	}
}

// TestSubmitWhileReading: Submit takes no lock of the context's, which a
// collection holds while it reads (the pool's lock alone orders them):
// on the application's thread, waiting for it, and for the wake after it,
// took 100-1,000 us where the collection held it 20-130 us (H200).
func TestSubmitWhileReading(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{})
	zone := r.p.Name("z")
	r.frame(func(cmd vkg.CommandBuffer) { r.g.Zone(cmd, zone).End() })
	r.g.mu.Lock()
	submitted := r.submitAside()
	select {
	case <-submitted:
		r.g.mu.Unlock()
	case <-time.After(20 * time.Second):
		r.g.mu.Unlock()
		t.Fatal("Submit waited for the context's lock")
	}
	if s := r.g.Stats(); !s.Balanced() {
		t.Fatalf("books do not balance: %+v", s)
	}
}

// submitAside runs a frame that submits a command buffer, on a goroutine
// of its own, and returns a channel closed once Submit returned.
func (r *rig) submitAside() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		r.p.BeginFrame()
		cmd := r.q.Cmd()
		r.g.submitted([]vkg.CommandBuffer{cmd})
		r.p.EndFrame()
		r.q.Free(cmd)
		close(done)
	}()
	return done
}
