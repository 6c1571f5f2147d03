// Package timeline is Framescope's data model and its pure-Go logic: the
// clock model that places GPU ticks on the host CLOCK_MONOTONIC timeline
// (ClockModel), the live Recorder that builds one timeline from CPU spans,
// GPU zones, frames, flows and counters under bounded memory, and the
// plain Trace that every exporter reads. It knows nothing of Vulkan.
//
// All times in a Trace are nanoseconds of the host's CLOCK_MONOTONIC, the
// clock Now reads. GPU spans arrive here already converted by the clock
// model and carry the model's error bound with them.
package timeline
