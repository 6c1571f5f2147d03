#version 450
#extension GL_GOOGLE_include_directive : require
#include "push.glsl"

// GPU work that leaves the image as it was: a loop of pc.iterations hash
// rounds per fragment, whose result is written with alpha 0 under
// SRC_ALPHA/ONE_MINUS_SRC_ALPHA blending. Every term of acc is below 1, so
// acc never exceeds pc.iterations and alpha is always 0, but the compiler
// cannot know that and must run the loop.
layout(location = 0) out vec4 outColor;

void main() {
	vec2 p = gl_FragCoord.xy * 0.0137 + vec2(pc.seed);
	float acc = 0.0;
	for (uint i = 0u; i < pc.iterations; i++) {
		float h = fract(sin(dot(p, vec2(12.9898, 78.233))) * 43758.5453);
		p = vec2(h, p.x + 0.5);
		acc += h;
	}
	float alpha = acc > float(pc.iterations) + 1.0 ? 1.0 : 0.0;
	outColor = vec4(fract(acc), 0.5, 0.5, alpha);
}
