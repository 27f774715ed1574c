package yamldoc

import "testing"

func TestMarker(t *testing.T) {
	for in, want := range map[string]string{
		"---": "---", "---\n": "---", "--- # c\n": "---", "---\tx": "---", "...\r\n": "...",
		"": "", "--": "", "----\n": "", " ---\n": "", "---x": "", "..x": "", "kind: x\n": "",
	} {
		if got := Marker([]byte(in)); got != want {
			t.Errorf("Marker(%q) = %q, want %q", in, got, want)
		}
	}
}
