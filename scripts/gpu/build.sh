#!/usr/bin/env bash
# Builds, here, what the GPU-machine scripts run: the CLI, the demo and the
# test binaries of the packages that touch Vulkan, into .gpubin/.
set -eu
mkdir -p .gpubin
go build -o .gpubin/ ./cmd/framescope ./examples/triangle
for p in internal/vk querypool profiler profiler/benchgpu examples/triangle; do
	go test -c -o ".gpubin/$(echo "$p" | tr / _).test" "./$p"
done
ls -la .gpubin
