package record

import "github.com/framescope/framescope/timeline"

// NameOf returns the name registered as id, or "" when id is unknown.
func (r *Recorder) NameOf(id timeline.NameID) string {
	r.lock()
	defer r.mu.Unlock()
	if int(id) < len(r.names) {
		return r.names[id]
	}
	return ""
}
