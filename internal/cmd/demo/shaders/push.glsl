// The push constants every stage of every pipeline sees: one range of 16
// bytes, pushed once per frame (see push.go).
layout(push_constant) uniform Push {
	float angle;       // the triangle's rotation about the centre, radians
	uint  iterations;  // the load shader's loop count
	float seed;        // varies the load shader's input per frame
	float pad;
} pc;
