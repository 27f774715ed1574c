package load

import (
	"encoding/base64"
	"testing"
)

// BenchmarkComponentsBase64 compares what a rendered ConfigMap's blob
// costs: decoded (decodeBase64) or compared with the held blob (encodes).
func BenchmarkComponentsBase64(b *testing.B) {
	raw := make([]byte, 120<<10)
	for i := range raw {
		raw[i] = byte(i*131 + i>>9)
	}
	s := base64.StdEncoding.EncodeToString(raw)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeBase64(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encodes", func(b *testing.B) {
		for b.Loop() {
			if !encodes(s, raw) {
				b.Fatal("not equal")
			}
		}
	})
}
