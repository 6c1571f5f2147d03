package profiler

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

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
	for f, want := range map[QueueFlags]PipelineStats{
		all: timeline.AllPipelineStats, QueueGraphics | QueueTransfer: timeline.GraphicsPipelineStats,
		QueueCompute: timeline.ComputeShaderInvocations, QueueTransfer: 0, QueueVideoDecode: 0,
	} {
		if got := f.PipelineStats(); got != want {
			t.Errorf("%s counts %v, want %v", f, got, want)
		}
	}
}

// Without host query reset a transfer-only queue is refused, naming what
// to enable; with it, or on a graphics or compute queue, it is taken.
func TestCheckReset(t *testing.T) {
	transfer := Queue{Family: 1, Flags: QueueTransfer}
	if err := checkReset("queue", transfer, false); err == nil || !strings.Contains(err.Error(), "hostQueryReset") {
		t.Errorf("transfer-only queue without host reset: %v", err)
	}
	for _, c := range []struct {
		q         Queue
		hostReset bool
	}{{transfer, true}, {Queue{Flags: QueueCompute | QueueTransfer}, false}, {Queue{Flags: QueueGraphics}, false}} {
		if err := checkReset("queue", c.q, c.hostReset); err != nil {
			t.Errorf("%s, host reset %v: %v", c.q.Flags, c.hostReset, err)
		}
	}
}
