package blob

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"io"
	"os/exec"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestInspectExpectedTakesCleanBlobs: the check against the expected
// content vouches for clean blobs of a real-shaped manifest whatever made
// them (ours, klauspost's and Go's gzip at every level, GNU gzip), with
// the Info inflating gives; a blob that differs from the guess by one
// byte, or whose trailer is damaged, is left to the inflater.
func TestInspectExpectedTakesCleanBlobs(t *testing.T) {
	yaml := manifestgen.Generate(manifestgen.Spec{
		Provider: "infrastructure-test", Prefix: "capt", Group: "infrastructure.cluster.x-k8s.io",
		Kinds: []string{"TestCluster"}, Image: "example.com/capt:v1", Size: 200 << 10, Seed: 3,
	})
	blobs := map[string][]byte{}
	blobs["ours"], _ = CompressBytes(yaml)
	for level := -2; level <= 9; level++ {
		var k, s bytes.Buffer
		kw, _ := kgzip.NewWriterLevel(&k, level)
		sw, _ := stdgzip.NewWriterLevel(&s, level)
		for _, w := range []io.WriteCloser{kw, sw} {
			if _, err := w.Write(yaml); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		blobs["klauspost level "+string(rune('0'+level+2))] = k.Bytes()
		blobs["go level "+string(rune('0'+level+2))] = s.Bytes()
	}
	gz := testpeer.Binary(t, "gzip", "apt-get install gzip")
	for _, l := range []string{"-1", "-6", "-9"} {
		cmd := exec.Command(gz, l, "-c")
		cmd.Stdin = bytes.NewReader(yaml)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		blobs["gnu "+l] = out
	}
	exp := &Expect{Data: yaml, SHA256: sha256.Sum256(yaml)}
	for name, b := range blobs {
		want := InspectExpect(bytes.NewReader(b), 0, nil, exp)
		if want.Err != nil {
			t.Fatalf("%s: %v", name, want.Err)
		}
		got, ok := inspectExpected(context.Background(), b, exp, nil)
		if !ok {
			t.Errorf("%s: a clean blob was left to the inflater", name)
			continue
		}
		if infoKey(got) != infoKey(want) {
			t.Errorf("%s:\nchecked  %s\ninflated %s", name, infoKey(got), infoKey(want))
		}
	}
	b := blobs["ours"]
	wrong := bytes.Clone(yaml)
	wrong[len(wrong)/2] ^= 1
	if _, ok := inspectExpected(context.Background(), b, &Expect{Data: wrong, SHA256: sha256.Sum256(wrong)}, nil); ok {
		t.Error("vouched for a blob that differs from the guess by one byte")
	}
	for _, at := range []int{len(b) - 8, len(b) - 1} {
		bad := bytes.Clone(b)
		bad[at] ^= 1
		if _, ok := inspectExpected(context.Background(), bad, exp, nil); ok {
			t.Errorf("vouched for a blob with trailer byte %d damaged", at)
		}
	}
	if _, ok := inspectExpected(context.Background(), append(bytes.Clone(b), 0), exp, nil); ok {
		t.Error("vouched for a blob with a byte after its trailer")
	}
}
