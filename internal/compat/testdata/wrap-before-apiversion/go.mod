module example.com/oldwrap

go 1.24.0

require (
	github.com/framescope/framescope v0.0.0
	github.com/google/pprof v0.0.0-20260709232956-b9395ee17fa0
	github.com/vulkan-go/vulkan v0.0.0-20210402152248-956e3850d8f9
)

require (
	golang.org/x/sys v0.37.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/framescope/framescope => ../../../..
