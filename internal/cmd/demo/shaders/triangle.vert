#version 450
#extension GL_GOOGLE_include_directive : require
#include "push.glsl"

// A triangle whose centroid is the origin, rotated about it: the centre
// pixel always shows the average of the three vertex colors.
layout(location = 0) in vec2 inPos;
layout(location = 1) in vec3 inColor;
layout(location = 0) out vec3 vColor;

void main() {
	float c = cos(pc.angle);
	float s = sin(pc.angle);
	gl_Position = vec4(c * inPos.x - s * inPos.y, s * inPos.x + c * inPos.y, 0.0, 1.0);
	vColor = inColor;
}
