package chrome

import (
	"encoding/json"
	"testing"
)

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t\x00\x1f", `"\n\r\t\u0000\u001f"`},
		{"bad \xff\xfe utf8", `"bad \ufffd\ufffd utf8"`},
		{"cut \xe2\x82", `"cut \ufffd\ufffd"`},
		{"ünïcode ✓ 🎮", `"ünïcode ✓ 🎮"`},
		{"line\u2028sep\u2029", `"line\u2028sep\u2029"`},
		{"</script>", `"</script>"`},
	}
	for _, tc := range tests {
		got := string(appendString(nil, tc.in))
		if got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("appendString(%q) is not JSON: %v", tc.in, err)
		}
	}
}
