package main

import "testing"

// TestFallbackRoots: the compiled-in roots all parse, and there are as many
// as a public CA bundle holds (the image has no other).
func TestFallbackRoots(t *testing.T) {
	_, n, bad := fallbackPool()
	if bad != 0 || n < 100 {
		t.Fatalf("%d fallback roots parsed, %d did not; want 100 or more, all parsed", n, bad)
	}
}
