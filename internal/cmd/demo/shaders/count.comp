#version 450

// A dispatch of known size, for the pipeline statistics tests: 64
// invocations a workgroup, each of which does a little shared-memory work.
layout(local_size_x = 64) in;

shared uint cells[64];

void main() {
	cells[gl_LocalInvocationIndex] = gl_GlobalInvocationID.x;
	barrier();
	cells[gl_LocalInvocationIndex] += cells[63u - gl_LocalInvocationIndex];
}
