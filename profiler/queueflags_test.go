package profiler

import "testing"

func TestQueueFlags(t *testing.T) {
	for _, c := range []struct {
		f    QueueFlags
		want string
	}{
		{QueueGraphics | QueueCompute | QueueTransfer, "graphics+compute+transfer"},
		{QueueTransfer | QueueSparseBinding, "transfer+sparse"},
		{QueueVideoDecode | 0x200, "video-decode+0x200"},
		{0, "0x0"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%#x: %q, want %q", uint32(c.f), got, c.want)
		}
	}
	all := QueueGraphics | QueueCompute
	if !all.Has(QueueCompute) || !all.Has(QueueGraphics|QueueCompute) || all.Has(QueueTransfer) || all.Has(QueueCompute|QueueTransfer) {
		t.Error("Has")
	}
}
