package demo

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	vkg "github.com/vulkan-go/vulkan"
)

func TestParseFlags(t *testing.T) {
	def := defaultConfig()
	for _, tc := range []struct {
		name string
		args []string
		want func(c *Config) // edits the defaults into what is expected
		err  string          // a substring of the message, when it fails
	}{
		{name: "defaults", want: func(*Config) {}},
		{name: "all", args: []string{"-frames", "20", "-out", "o", "-device", "llvm", "-png", "f.png", "-load", "7",
			"-iterations", "9", "-zones", "100", "-rawzones", "50", "-stages", "all-all", "-inflight", "2", "-queries", "64",
			"-size", "64", "-warmup", "5", "-validation", "-quiet", "-json"},
			want: func(c *Config) {
				c.frames, c.out, c.device, c.png, c.load, c.iterations = 20, "o", "llvm", "f.png", 7, 9
				c.zones, c.rawZones, c.inFlight, c.size, c.queries, c.warmup = 100, 50, 2, 64, 64, 5
				c.stages = stages{vkg.PipelineStageAllCommandsBit, vkg.PipelineStageAllCommandsBit}
				c.validation, c.quiet, c.json = true, true, true
			}},
		{name: "bad stages", args: []string{"-stages", "top-nowhere"}, err: "stages"},
		{name: "negative frames", args: []string{"-frames", "-1"}, err: "-frames"},
		{name: "negative fps", args: []string{"-fps", "-1"}, err: "-fps"},
		{name: "until interrupted", args: []string{"-frames", "0", "-warmup", "50", "-http", "127.0.0.1:0"},
			want: func(c *Config) { c.frames, c.warmup, c.http = 0, 50, "127.0.0.1:0" }},
		{name: "negative load", args: []string{"-load", "-1"}, err: "negative"},
		{name: "negative queries", args: []string{"-queries", "-1"}, err: "negative"},
		{name: "too many in flight", args: []string{"-inflight", "9"}, err: "-inflight"},
		{name: "warm-up too long", args: []string{"-frames", "10", "-warmup", "10"}, err: "-warmup"},
		{name: "no out", args: []string{"-out", ""}, err: "-out"},
		{name: "stray argument", args: []string{"extra"}, err: "unexpected"},
		{name: "unknown flag", args: []string{"-nope"}, err: "-nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got, err := ParseFlags("overhead", tc.args, &stderr, OverheadRig)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("parseFlags(%q) = %+v, want an error", tc.args, got)
				}
				if !strings.Contains(stderr.String(), tc.err) {
					t.Errorf("stderr %q does not mention %q", stderr.String(), tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err, stderr.String())
			}
			want := def
			tc.want(&want)
			if got != want {
				t.Errorf("parseFlags(%q)\n got %+v\nwant %+v", tc.args, got, want)
			}
		})
	}
}

func TestParseFlagsHelp(t *testing.T) {
	var stderr bytes.Buffer
	_, err := ParseFlags("overhead", []string{"-help"}, &stderr, OverheadRig)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-frames", "-load", "-zones", "-rawzones", "-cmdgpu", "-stages", "-json"} {
		if !strings.Contains(stderr.String(), f) {
			t.Errorf("usage does not list %s", f)
		}
	}
}

// The demo's own flags leave the overhead rig out: its usage does not list
// the rig's flags, and it refuses them.
func TestDemoFlagsLeaveTheRigOut(t *testing.T) {
	var stderr bytes.Buffer
	if _, err := ParseFlags("triangle", []string{"-help"}, &stderr, DemoFlags); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-rawzones", "-cmdgpu", "-stages"} {
		// A flag's line is "  -name" then a space or the line's end
		// (-render-stages is the demo's own).
		if u := stderr.String(); strings.Contains(u, "  "+f+" ") || strings.Contains(u, "  "+f+"\n") {
			t.Errorf("the demo's usage lists %s", f)
		}
	}
	for _, args := range [][]string{{"-rawzones", "4"}, {"-cmdgpu"}, {"-stages", "top-top"}} {
		stderr.Reset()
		if _, err := ParseFlags("triangle", args, &stderr, DemoFlags); err == nil {
			t.Errorf("the demo took %q", args)
		}
	}
	if c, err := ParseFlags("triangle", []string{"-load", "3", "-zones", "5"}, &stderr, DemoFlags); err != nil || c.load != 3 || c.zones != 5 {
		t.Errorf("-load 3 -zones 5: %+v, %v", c, err)
	}
}
