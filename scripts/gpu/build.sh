#!/usr/bin/env bash
# Builds, here, what the GPU-machine scripts run: the CLI, the demo and the
# test binaries of the packages that touch Vulkan, into .gpubin/.
set -eu
mkdir -p .gpubin
go build -ldflags=-s\ -w -o .gpubin/ ./cmd/framescope ./examples/triangle ./examples/wrap ./internal/cmd/overhead ./internal/cmd/liveload
for p in internal/vk internal/querypool internal/testkit/loopcheck profiler profiler/benchgpu internal/cmd/demo examples/wrap timeline export/perfetto live; do
	go test -c -ldflags=-s\ -w -o ".gpubin/$(echo "$p" | tr / _).test" "./$p"
done
# The profiler before issue 12, for benchmarks against it in the same run
# (OLD=<commit>).
if [ -n "${OLD:-}" ]; then
	rm -rf /tmp/fs-old && git worktree add -f /tmp/fs-old "$OLD" >/dev/null
	mkdir -p .gpubin/old
	(cd /tmp/fs-old && go test -c -ldflags=-s\ -w -o "$OLDPWD/.gpubin/old/profiler.test" ./profiler)
	git worktree remove --force /tmp/fs-old
fi
ls -la .gpubin
