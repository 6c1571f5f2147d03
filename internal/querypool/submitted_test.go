package querypool_test

import (
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Each pair gets the key of the first submission that named its command
// buffer in its frame, whether the frame names a few command buffers
// (looked up in order) or many (sorted once, then searched); pairs of
// command buffers no submission named get key 0, and Submitted says
// whether their frame had submissions at all.
func TestSubmittedKeys(t *testing.T) {
	for _, n := range []int{3, 40} {
		q := vktest.Graphics(t, vk.Config{})
		p := newPool(t, q, querypool.Config{FramesInFlight: 1, Queries: 512})
		cmds := q.Cmds(n + 1) // the last is never named
		f := q.Fence()
		if err := p.BeginFrame(1, cmds[0]); err != nil {
			t.Fatal(err)
		}
		for i, c := range cmds {
			pr, ok := p.Begin(c, top, uint32(i))
			if !ok {
				t.Fatal("refused")
			}
			p.End(pr, c, bottom)
		}
		p.EndFrame(cmds[n])
		for i, c := range cmds[:n] {
			key := uint64(1000 + i/2) // two command buffers a submission
			if missed := p.Submit(0, 1, key, []vkg.CommandBuffer{c}); missed != 0 {
				t.Fatalf("%d not noted", missed)
			}
		}
		if missed := p.Submit(0, 1, 7, cmds[:1]); missed != 0 { // named again: the first key stays
			t.Fatalf("%d not noted", missed)
		}
		if missed := p.Submit(0, 99, 8, cmds[:1]); missed != 1 {
			t.Errorf("a frame with no slot noted %d of 1", 1-missed)
		}
		q.Submit(f, cmds...)
		q.Wait(f)
		for _, r := range collectAll(t, p, n+1) {
			want := uint64(1000 + r.Name/2)
			if int(r.Name) == n {
				want = 0
			}
			if r.Key != want || !r.Submitted {
				t.Errorf("%d command buffers: pair %d has key %d (submitted %v), want %d", n, r.Name, r.Key, r.Submitted, want)
			}
		}
	}
}
