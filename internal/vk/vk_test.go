package vk_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

type (
	Config       = vk.Config
	TimeDomain   = vk.TimeDomain
	MissingError = vk.MissingError
)

const (
	TimeDomainDevice         = vk.TimeDomainDevice
	TimeDomainClockMonotonic = vk.TimeDomainClockMonotonic
)

func openTest(t *testing.T, cfg Config) *vk.Device { return vktest.Open(t, cfg) }

func TestOpenAndCaps(t *testing.T) {
	d := openTest(t, Config{})
	c := d.Caps
	t.Logf("device %q type %s api %s driver %q %q period %v ns domains %v calibrated %q hostQueryReset %v",
		c.Name, c.Type, c.APIVersion, c.DriverName, c.DriverInfo, c.TimestampPeriod, c.TimeDomains, d.Calibrated, d.HostQueryReset)
	if c.Name == "" {
		t.Error("empty device name")
	}
	if c.TimestampPeriod <= 0 {
		t.Errorf("timestampPeriod %v", c.TimestampPeriod)
	}
	if len(d.Queues) == 0 {
		t.Fatal("no queues")
	}
	for _, f := range c.Families {
		if f.TimestampValidBits > 64 {
			t.Errorf("family %d: %d valid bits", f.Index, f.TimestampValidBits)
		}
	}
}

func TestCalibratedTimestamps(t *testing.T) {
	d := openTest(t, Config{})
	if d.Calibrated == "" {
		t.Skipf("%s has no calibrated timestamps", d.Caps.Name)
	}
	doms := []TimeDomain{TimeDomainDevice, TimeDomainClockMonotonic}
	var out [2]uint64
	dev, err := d.CalibratedTimestamps(doms, out[:])
	if err != nil {
		t.Fatal(err)
	}
	if out[0] == 0 || out[1] == 0 {
		t.Errorf("zero timestamps %v", out)
	}
	t.Logf("device %d host %d maxDeviation %d", out[0], out[1], dev)
	if _, err := d.CalibratedTimestamps(nil, out[:]); err == nil {
		t.Error("no domains: want an error")
	}
}

func TestMissingEntryPoints(t *testing.T) {
	d := openTest(t, Config{NoCalibrated: true, NoHostQueryReset: true})
	if d.Calibrated != "" || d.HostQueryReset {
		t.Fatalf("extension left on: %q %v", d.Calibrated, d.HostQueryReset)
	}
	var out [2]uint64
	_, err := d.CalibratedTimestamps([]TimeDomain{TimeDomainDevice, TimeDomainClockMonotonic}, out[:])
	var me *MissingError
	if err == nil || !asMissing(err, &me) {
		t.Errorf("want a MissingError, got %v", err)
	}
	if err := d.ResetQueryPool(nil, 0, 1); err == nil || !asMissing(err, &me) {
		t.Errorf("want a MissingError, got %v", err)
	}
}

func asMissing(err error, me **MissingError) bool { return errors.As(err, me) }

// The validation layer is really on: a bad reset is reported.
func TestValidationCatchesMisuse(t *testing.T) {
	d := vktest.OpenUnchecked(t, Config{})
	if !d.Instance.Validation {
		t.Skip("validation layer not installed")
	}
	_, e0 := vk.ValidationCounts()
	// A create-info with the wrong sType: the driver ignores it, the layer must not.
	ci := vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeEventCreateInfo, QueryType: vkg.QueryTypeTimestamp, QueryCount: 2}
	var pool vkg.QueryPool
	if r := vkg.CreateQueryPool(d.Handle, &ci, nil, &pool); r == vkg.Success {
		defer vkg.DestroyQueryPool(d.Handle, pool, nil)
	}
	_, e1 := vk.ValidationCounts()
	msgs := vk.TakeValidationMessages()
	if e1 == e0 || len(msgs) == 0 {
		t.Fatalf("validation reported nothing for a wrong sType")
	}
	t.Logf("caught: %.120s", msgs[len(msgs)-1])
}

func TestSelectByName(t *testing.T) {
	d := openTest(t, Config{})
	name := d.Caps.Name
	in := d.Instance
	if _, _, err := in.SelectPhysical("no such device xyz"); err == nil {
		t.Error("want an error for an unknown name")
	}
	if _, _, err := in.SelectPhysical("99"); err == nil {
		t.Error("want an error for an index out of range")
	}
	_, pd, err := in.SelectPhysical(name[:3])
	if err != nil || pd == nil {
		t.Errorf("select %q: %v", name[:3], err)
	}
	if i, pd, err := in.SelectPhysical("0"); err != nil || i != 0 || pd == nil {
		t.Errorf("select index 0: %d, %v", i, err)
	}
	t.Setenv("FRAMESCOPE_DEVICE", name[1:4])
	if _, pd, err := in.SelectPhysical(""); err != nil || pd == nil {
		t.Errorf("select by $FRAMESCOPE_DEVICE=%q: %v", name[1:4], err)
	}
	t.Setenv("FRAMESCOPE_DEVICE", "no such device xyz")
	if _, _, err := in.SelectPhysical(""); err == nil {
		t.Error("want an error for an unknown $FRAMESCOPE_DEVICE")
	}
}

// TestSelectDigitsInName: digits that are no device's index are part of a
// name, as in "-device 100" for an H100.
func TestSelectDigitsInName(t *testing.T) {
	d := openTest(t, Config{})
	name := d.Caps.Name
	k := strings.IndexAny(name, "0123456789")
	if k < 0 {
		t.Skipf("%q has no digit", name)
	}
	j := k
	for j < len(name) && name[j] >= '0' && name[j] <= '9' {
		j++
	}
	digits := name[k:j]
	if n, _ := strconv.Atoi(digits); n == 0 || len(digits) > 9 {
		t.Skipf("%q: the digits %q are a valid index or too long", name, digits)
	}
	if _, pd, err := d.Instance.SelectPhysical(digits); err != nil || pd == nil {
		t.Errorf("select %q (part of %q): %v", digits, name, err)
	}
}

// What the layer says during vkCreateInstance itself is caught: the
// messenger's create info is chained into VkInstanceCreateInfo. With best
// practices on, the layer warns there about the debugging extensions
// enabled.
func TestInstanceCreationReported(t *testing.T) {
	vk.TakeValidationMessages()
	w0, _ := vk.ValidationCounts()
	in, err := vk.NewInstance(vk.InstanceConfig{Validation: true, RequireValidation: vktest.Required(), BestPractices: true})
	if err != nil {
		if vktest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer in.Destroy()
	if !in.Validation {
		t.Skip("validation layer not installed")
	}
	w1, _ := vk.ValidationCounts()
	msgs := vk.TakeValidationMessages()
	found := false
	for _, m := range msgs {
		found = found || strings.Contains(m, "vkCreateInstance")
	}
	if w1 == w0 || !found {
		t.Fatalf("%d warnings during vkCreateInstance, messages %q; want the best-practices warning", w1-w0, msgs)
	}
	t.Logf("caught: %.120s", msgs[0])
}

// vktest turns synchronization validation on: a write after write with no
// barrier between is reported.
func TestSyncValidationOn(t *testing.T) {
	d := vktest.OpenUnchecked(t, Config{})
	if !d.Instance.Validation {
		t.Skip("validation layer not installed")
	}
	q := vktest.NewQueue(t, d, d.Queues[0])
	b, err := d.HostBuffer(256, vkg.BufferUsageTransferDstBit)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	cmd := q.Cmd()
	vk.TakeValidationMessages()
	vkg.CmdFillBuffer(cmd, b.Buffer, 0, 256, 1)
	vkg.CmdFillBuffer(cmd, b.Buffer, 0, 256, 2)
	msgs := vk.TakeValidationMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "SYNC-HAZARD-WRITE-AFTER-WRITE") {
		t.Fatalf("two fills of one buffer with no barrier: %q, want one SYNC-HAZARD-WRITE-AFTER-WRITE", msgs)
	}
	q.SubmitWait(cmd)
}
