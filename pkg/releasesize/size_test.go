package releasesize

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// gzipAt is data gzipped by the standard library at level.
func gzipAt(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

var testTemplate = &chart.File{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")}

// providerRelease is a provider package's release: the YAML, its blob
// (at level, or blob.CompressBytes when level is 0) beside it unless
// helmignored, metadata, the ConfigMap holding the blob, and extra files.
func providerRelease(t testing.TB, yml []byte, level int, shipYAML bool, extra ...*chart.File) *Input {
	t.Helper()
	var gz []byte
	if level == 0 {
		var err error
		if gz, err = blob.CompressBytes(yml); err != nil {
			t.Fatal(err)
		}
	} else {
		gz = gzipAt(t, yml, level)
	}
	files := []*chart.File{{Name: "files/components.gz", Data: gz}, {Name: "files/metadata.yaml", Data: []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n")}}
	if shipYAML {
		files = append(files, &chart.File{Name: "files/core-components.yaml", Data: yml})
	}
	files = append(files, extra...)
	in := &Input{Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"}, Templates: []*chart.File{testTemplate}, Files: files},
		Name: "x", Namespace: "ns"}
	in.AddManifest("x/templates/cm.yaml", string(testTemplate.Data)+"binaryData:\n  components: "+base64.StdEncoding.EncodeToString(gz)+"\n")
	return in
}

// checkBounds fails unless the exact size lies within in's bounds, those
// of every stage of size, and under the size it gives.
func checkBounds(t *testing.T, name string, in *Input) (lo, exact, hi int64) {
	t.Helper()
	lo, hi = in.bounds()
	exact, ok := in.exact()
	if !ok {
		t.Fatalf("%s: exact failed", name)
	}
	if lo > exact || exact > hi {
		t.Errorf("%s: exact %d outside the bounds [%d, %d]", name, exact, lo, hi)
	}
	if tlo, thi := in.parts().bounds(measuredTwin); tlo > exact || exact > thi {
		t.Errorf("%s: exact %d outside the twin bounds [%d, %d]", name, exact, tlo, thi)
	} else {
		t.Logf("%s: twin bounds %.3f–%.3f of the exact size", name, float64(tlo)/float64(exact), float64(thi)/float64(exact))
	}
	if slo, shi, ok := in.streamBounds(); !ok || slo > exact || exact > shi {
		t.Errorf("%s: exact %d outside the stream bounds [%d, %d] (%v)", name, exact, slo, shi, ok)
	} else {
		t.Logf("%s: stream bounds %.3f–%.3f of the exact size", name, float64(slo)/float64(exact), float64(shi)/float64(exact))
	}
	if got := in.Size(); got == nil || got.Bytes < exact || (got.Exact && got.Bytes != exact) {
		t.Errorf("%s: size %+v, exact %d", name, got, exact)
	}
	t.Logf("%s: exact %d (%.1f %% of the limit), bounds %.3f–%.3f of it", name, exact, 100*float64(exact)/model.ReleaseLimit, float64(lo)/float64(exact), float64(hi)/float64(exact))
	return lo, exact, hi
}

// TestReleaseBoundsHold: the exact size lies between the bounds on
// real-shaped releases (the raw YAML beside its blob, blobs of every gzip
// level, second providers, patches), on the real-shaped packages gentree
// writes, and on charts of random, compressible and small data.
func TestReleaseBoundsHold(t *testing.T) {
	for i, size := range []int{40 << 10, 300 << 10, 700 << 10, 1 << 20, 1400 << 10} {
		yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: "g.io", Kinds: []string{"PCluster", "PMachine"}, Size: size, Seed: int64(i) + 11})
		for _, level := range []int{0, 9, 6, 1} {
			checkBounds(t, fmt.Sprintf("%d KiB YAML beside its level-%d blob", size>>10, level), providerRelease(t, yml, level, true))
		}
		checkBounds(t, fmt.Sprintf("%d KiB YAML helmignored", size>>10), providerRelease(t, yml, 0, false))
	}
	yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: "g.io", Kinds: []string{"PCluster"}, Size: 600 << 10, Seed: 5})
	small := manifestgen.Generate(manifestgen.Spec{Provider: "t", Prefix: "t", Group: "t.io", Kinds: []string{"TConfig"}, Seed: 6})
	mid := gzipAt(t, yml[:160<<10], 9) // base64 shorter than windowPart
	var copies []*chart.File
	for i := range 12 {
		copies = append(copies, &chart.File{Name: fmt.Sprintf("files/c%02d.gz", i), Data: mid})
	}
	for name, extra := range map[string][]*chart.File{
		"blob copies in a row":  copies,
		"random file":           {{Name: "files/r.bin", Data: randomBytes(200<<10, 1)}},
		"compressible file":     {{Name: "files/z.bin", Data: make([]byte, 300<<10)}},
		"gzip of zeros":         {{Name: "files/z.gz", Data: gzipAt(t, make([]byte, 1<<20), 9)}},
		"stored gzip of text":   {{Name: "files/s.gz", Data: gzipAt(t, yml, 0)}},
		"second provider":       {{Name: "files/b-components-talos.yaml", Data: small}, {Name: "files/components-talos.gz", Data: gzipAt(t, small, 9)}},
		"patch and dockerfile":  {{Name: "patches/0001.diff", Data: bytes.Repeat([]byte("+\tlog.Info(\"x\")\n"), 1200)}, {Name: "images/x/Dockerfile", Data: []byte("FROM golang\nARG VERSION=v1\n")}},
		"yaml with a wrong crc": {{Name: "files/other.yaml", Data: append(bytes.Clone(yml[:len(yml)-1]), 'x')}},
		// Short blobs side by side compress against each other: copies of
		// one blob, blobs of nearly the same YAML (one changed line).
		"short blob twice":   {{Name: "files/a.gz", Data: gzipAt(t, small, 9)}, {Name: "files/b.gz", Data: gzipAt(t, small, 9)}},
		"near-same blobs":    {{Name: "files/a.gz", Data: gzipAt(t, small, 9)}, {Name: "files/b.gz", Data: gzipAt(t, append(bytes.Clone(small[:len(small)-40]), "# end\n"...), 9)}},
		"near-same, level 1": {{Name: "files/a.gz", Data: gzipAt(t, small, 1)}, {Name: "files/b.gz", Data: gzipAt(t, append([]byte("# start\n"), small...), 1)}},
	} {
		checkBounds(t, name, providerRelease(t, yml, 0, true, extra...))
	}

	// The packages gentree writes for `make bench`.
	root := filepath.Join(t.TempDir(), "tree")
	res, err := gentree.Generate(root, gentree.Options{Packages: 6, Size: 1 << 20, Seed: 9, Shape: gentree.Real})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Packages {
		checkBounds(t, p.Dir, renderedRelease(t, filepath.Join(root, filepath.FromSlash(p.Dir))))
	}
}

// renderedRelease is the release of the chart in dir, its manifest the
// ConfigMaps as the chart's templates write them (blobs base64 in
// binaryData).
func renderedRelease(t *testing.T, dir string) *Input {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Chart: ch, Name: "x", Namespace: "ns"}
	gzs, _ := filepath.Glob(filepath.Join(dir, "files", "*.gz"))
	for _, name := range gzs {
		gz, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		in.AddManifest("x/templates/configmaps.yaml", "apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  components: "+base64.StdEncoding.EncodeToString(gz)+"\ndata:\n  metadata: |\n    x\n")
	}
	return in
}

// TestReleaseBoundsManifestBase64: the long base64 values a manifest holds
// (a ConfigMap's blob) are taken out of it and counted as the bytes they
// encode, and the bounds hold whatever they encode: a blob, random bytes,
// or bytes that compress well.
func TestReleaseBoundsManifestBase64(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 300 << 10})
	gz, err := blob.CompressBytes(yml)
	if err != nil {
		t.Fatal(err)
	}
	rnd := randomBytes(200<<10, 5)
	for name, data := range map[string][]byte{
		"blob":               gz,
		"random":             rnd,
		"random, gzip magic": append([]byte{0x1f, 0x8b, 8}, rnd...),
		"compresses":         append([]byte{0x1f, 0x8b}, make([]byte, 200<<10)...),
		"stored gzip":        gzipAt(t, yml, 0),
		"yaml itself":        yml,
	} {
		b64 := base64.StdEncoding.EncodeToString(data)
		in := &Input{Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"}, Templates: []*chart.File{testTemplate}},
			Name: "x", Namespace: "ns"}
		in.AddManifest("x/templates/cm.yaml", string(testTemplate.Data)+"binaryData:\n  components: "+b64+"\n  other: "+b64+"\ndata:\n  x: y\n")
		want := 2
		if !strings.HasPrefix(b64, "H4sI") {
			want = 0 // not gzip: sampled
		}
		m := in.manifest.Bytes()
		if _, long := splitLongBase64(m); len(long) != want || (want > 0 && string(m[long[0][0]:long[0][1]]) != b64) {
			t.Fatalf("%s: %d values taken out, want %d", name, len(long), want)
		}
		checkBounds(t, name, in)
	}
	// What is left is the manifest without the values, in order; each
	// value is taken from where it lies in the manifest.
	m := "a: 1\nb: H4sI" + strings.Repeat("A", 5000) + "\nc: 2\nd: H4sI" + strings.Repeat("B", 5000) + "\ne: 3\n"
	rest, long := splitLongBase64([]byte(m))
	if string(rest) != "a: 1\nb: \nc: 2\nd: \ne: 3\n" || len(long) != 2 {
		t.Fatalf("rest %q, %d taken", rest, len(long))
	}
	for i, want := range []string{"H4sI" + strings.Repeat("A", 5000), "H4sI" + strings.Repeat("B", 5000)} {
		if got := m[long[i][0]:long[i][1]]; got != want {
			t.Fatalf("value %d taken: %.20q…, %d bytes, want %.20q…, %d bytes", i, got, len(got), want, len(want))
		}
	}
}

// TestReleaseSizeAtTheLines: a release far from both lines is not encoded
// exactly (its upper bound stands); one a little farther than its twins'
// bounds reach is decided by them; one whose bounds (every stage) hold a
// line is encoded exactly. Just
// over the warning line and just over the limit, the size given is the
// exact one, so the verdict is the exact encoding's.
func TestReleaseSizeAtTheLines(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: "g.io", Kinds: []string{"PCluster", "PMachine"}, Size: 2600 << 10, Seed: 3})
	in := func(n int) *Input { return providerRelease(t, yml[:n], 0, true) }
	exactOf := func(n int) float64 { e, _ := in(n).exact(); return float64(e) }
	// near is a YAML length whose release's exact size lies in [from,
	// from+4 KiB): the exact size grows about linearly with the YAML, so
	// the secant method gets there in a few encodings.
	near := func(from float64) int {
		a, b := 256<<10, len(yml)
		ea, eb := exactOf(a), exactOf(b)
		for range 12 {
			n := a + int(float64(b-a)*(from+2048-ea)/(eb-ea))
			n = min(max(n, 64<<10), len(yml))
			e := exactOf(n)
			if e >= from && e < from+4096 {
				return n
			}
			if e < from {
				a, ea = n, e
			} else {
				b, eb = n, e
			}
		}
		t.Fatalf("no YAML of up to %d bytes puts the release in [%.0f, %.0f)", len(yml), from, from+4096)
		return 0
	}
	for _, tc := range []struct {
		name string
		line float64
	}{{"warning", releaseWarnLine}, {"limit", releaseLimitLine + 1}} {
		// Just over the line, and just under it.
		for _, n := range []int{near(tc.line), near(tc.line - 4096)} {
			got := in(n).Size()
			exact, _ := in(n).exact()
			over := float64(exact) >= tc.line
			if !got.Exact || got.Bytes != exact || (float64(got.Bytes) >= tc.line) != over {
				t.Errorf("%s line, %d bytes of YAML: size %d (exact %v), want exactly %d (over the line: %v)", tc.name, n, got.Bytes, got.Exact, exact, over)
			}
		}
	}
	// Some 8 % over the warning line: within the first bounds' reach of
	// it, beyond the twins' (compressed alone): the twins decide, nothing
	// else is compressed, and the size is the upper bound they give.
	for _, line := range []float64{releaseWarnLine, releaseLimitLine} {
		r := in(near(line * 1.08))
		exact, _ := r.exact()
		if lo, hi := r.bounds(); !straddles(lo, hi) {
			t.Fatalf("%.0f bytes: bounds [%d, %d] hold no line; pick a size nearer to it", line*1.08, lo, hi)
		}
		log := stageLog{clock: func() time.Duration { return 0 }}
		got := r.sizeStaged(&log)
		if !log.twin || log.stream || log.exact || got.Exact || got.Bytes < exact || float64(got.Bytes) > float64(exact)*1.1 {
			t.Errorf("exact size %d: size %d (exact %v), stages %+v; want an upper bound from the twins alone", exact, got.Bytes, got.Exact, log)
		}
	}
	// Far below the warning line, and between the lines far from both:
	// the upper bound, not encoded.
	for _, n := range []int{300 << 10, near(0.9 * model.ReleaseLimit)} {
		r := in(n)
		lo, hi := r.bounds()
		if straddles(lo, hi) {
			t.Fatalf("%d bytes of YAML: bounds [%d, %d] hold a line; pick a size further from the lines", n, lo, hi)
		}
		if got := r.Size(); got.Exact || got.Bytes != hi {
			t.Errorf("%d bytes of YAML: size %+v, want the upper bound %d, not exact", n, got, hi)
		}
	}
}

// TestReleaseJSONIsMarshal: the streamed release JSON is byte for byte
// json.Marshal's, on releases with every optional field set and unset,
// HTML and non-ASCII characters, invalid UTF-8 and line separators at a
// chunk boundary, nil and empty files.
func TestReleaseJSONIsMarshal(t *testing.T) {
	long := strings.Repeat("a", 32<<10-1) + "é<&>\u2028" + strings.Repeat("b", 40<<10) + "\xff\xfe" + "ok"
	full := &release.Release{
		Name: "rel", Namespace: "ns", Version: 3, Manifest: long,
		Info:   &release.Info{Status: release.StatusDeployed, Description: "Install <complete>", FirstDeployed: fixedTime, LastDeployed: fixedTime},
		Config: map[string]any{"b": 1, "a": map[string]any{"x": "<y>"}},
		Hooks:  []*release.Hook{{Name: "h", Manifest: "kind: Job"}},
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2", Description: "a & b"},
			Lock:      &chart.Lock{Digest: "sha256:0"},
			Templates: []*chart.File{testTemplate, {Name: "templates/empty.yaml", Data: []byte{}}, {Name: "templates/nil.yaml"}},
			Values:    map[string]any{"replicas": 1, "image": map[string]any{"tag": "v1"}},
			Schema:    []byte(`{"type":"object"}`),
			Files:     []*chart.File{{Name: "files/r.bin", Data: randomBytes(100<<10+1, 7)}, {Name: "files/y.yaml", Data: []byte(long)}},
		},
	}
	for name, rel := range map[string]*release.Release{
		"full":       full,
		"empty":      {},
		"bare chart": {Chart: &chart.Chart{}, Info: &release.Info{}, Config: map[string]any{}},
	} {
		want, err := json.Marshal(rel)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeReleaseJSON(&got, rel); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			i := 0
			for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
				i++
			}
			t.Errorf("%s: streamed JSON differs from json.Marshal at byte %d of %d/%d: %.80q vs %.80q", name, i, got.Len(), len(want), got.Bytes()[i:], want[i:])
		}
	}
}

// TestStreamBoundsHold: the exact size lies between the bounds
// streamBounds gives on releases whose text compresses the most and the
// least against Helm's encoding: CRDs in templates rendered into the
// manifest (the longer search of best compression finds the most there),
// text whose alphabet changes every few KiB (a block coder that splits
// blocks there, as klauspost's does, beats Helm's), many tiny files,
// random and zero bytes, little text.
func TestStreamBoundsHold(t *testing.T) {
	meta := &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"}
	// alternating is random digits and random letters by turns, chunk
	// bytes each.
	alternating := func(chunk int) []byte {
		r := rand.New(rand.NewPCG(1, 2))
		var data []byte
		for len(data) < 1<<20 {
			alpha := "0123456789"
			if (len(data)/chunk)%2 == 1 {
				alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			}
			for range chunk {
				data = append(data, alpha[r.IntN(len(alpha))])
			}
		}
		return data
	}
	inManifest := func(data []byte) *Input {
		in := &Input{Chart: &chart.Chart{Metadata: meta, Templates: []*chart.File{testTemplate}}, Name: "x", Namespace: "ns"}
		in.AddManifest("x/templates/a.txt", string(data))
		return in
	}
	crds := func(n, size int) *Input {
		in := &Input{Chart: &chart.Chart{Metadata: meta}, Name: "x", Namespace: "ns"}
		for i := range n {
			yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: fmt.Sprintf("g%d.io", i), Kinds: []string{"PCluster", "PMachine"}, Size: size, Seed: int64(i)})
			name := fmt.Sprintf("templates/crds-%d.yaml", i)
			in.Chart.Templates = append(in.Chart.Templates, &chart.File{Name: name, Data: yml})
			in.AddManifest("x/"+name, string(yml))
		}
		return in
	}
	tiny := func(n int, data func(i int) []byte) *Input {
		in := &Input{Chart: &chart.Chart{Metadata: meta, Templates: []*chart.File{testTemplate}}, Name: "x", Namespace: "ns"}
		for i := range n {
			in.Chart.Files = append(in.Chart.Files, &chart.File{Name: fmt.Sprintf("files/f%04d", i), Data: data(i)})
		}
		in.AddManifest("x/templates/cm.yaml", string(testTemplate.Data))
		return in
	}
	// Real CRDs, as a CRD chart ships them: templates rendered as they are.
	real := &Input{Chart: &chart.Chart{Metadata: meta}, Name: "x", Namespace: "ns"}
	for _, f := range []string{"../../internal/app/cluster/testdata/turtles/capiprovider-crd.yaml", "../../examples/upstream/cluster-api/v1.10.1/core-components.yaml",
		"../../examples/upstream/cluster-api-provider-proxmox/v0.7.7/infrastructure-components.yaml"} {
		yml, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := "templates/" + filepath.Base(f)
		real.Chart.Templates = append(real.Chart.Templates, &chart.File{Name: name, Data: yml})
		real.AddManifest("x/"+name, string(yml))
	}
	for name, in := range map[string]*Input{
		"real CRDs in templates":        real,
		"alphabet by turns, 1 KiB":      inManifest(alternating(1 << 10)),
		"alphabet by turns, 4 KiB":      inManifest(alternating(4 << 10)),
		"alphabet by turns, 64 KiB":     inManifest(alternating(64 << 10)),
		"alphabet by turns in a file":   tiny(1, func(int) []byte { return alternating(4 << 10) }),
		"CRDs in templates, 4 x 1 MiB":  crds(4, 1<<20),
		"CRDs in templates, 40 x 8 KiB": crds(40, 8<<10),
		"one small CRD":                 crds(1, 0),
		"2000 tiny text files":          tiny(2000, func(i int) []byte { return fmt.Appendf(nil, "key%d: value%d\n", i, i*7) }),
		"2000 tiny random files":        tiny(2000, func(i int) []byte { return randomBytes(64, uint64(i)) }),
		"1000 tiny zero files":          tiny(1000, func(int) []byte { return make([]byte, 100) }),
		"random MiB":                    tiny(1, func(int) []byte { return randomBytes(1<<20, 3) }),
		"zero MiB":                      tiny(1, func(int) []byte { return make([]byte, 1<<20) }),
	} {
		exact, ok := in.exact()
		slo, shi, sok := in.streamBounds()
		if !ok || !sok || slo > exact || exact > shi {
			t.Errorf("%s: exact %d outside the stream bounds [%d, %d]", name, exact, slo, shi)
			continue
		}
		t.Logf("%s: exact %d, stream bounds %.3f–%.3f of it (level %d: %.3f)", name, exact, float64(slo)/float64(exact), float64(shi)/float64(exact), streamLevel, float64(shi)/streamHi/float64(exact))
	}
}

// TestGzipPartBound: the base64 of a gzip file, as the release JSON holds
// it, compresses at best compression to at most its size plus gzipMargin
// and gzipSlack, and (deflated text, windowPart or longer) to at least its
// size less gzipMarginLow: blobs of YAML at every level and length from
// smallPart up, of random bytes (stored blocks), of a few repeated
// bytes (deflate output that repeats itself: only the upper side holds),
// and random bytes behind gzip's magic.
func TestGzipPartBound(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 3 << 20, Seed: 8})
	r := rand.New(rand.NewPCG(4, 5))
	type blob struct {
		name  string
		gz    []byte
		lower bool
	}
	var blobs []blob
	for range 24 {
		n, level := 24<<10+r.IntN(len(yml)-24<<10), []int{1, 5, 6, 9}[r.IntN(4)]
		blobs = append(blobs, blob{fmt.Sprintf("%d bytes of YAML at level %d", n, level), gzipAt(t, yml[:n], level), true})
	}
	for _, n := range []int{6 << 10, 40 << 10, 700 << 10} {
		blobs = append(blobs,
			blob{fmt.Sprintf("%d random bytes", n), gzipAt(t, randomBytes(n, uint64(n)), 9), false},
			blob{fmt.Sprintf("%d random bytes behind the magic", n), append([]byte{0x1f, 0x8b, 8, 0}, randomBytes(n, uint64(n)+1)...), false})
	}
	blobs = append(blobs, blob{"64 MiB of a repeated line", gzipAt(t, bytes.Repeat([]byte("spec: {}\n"), 64<<20/9), 9), false})
	for _, b := range blobs {
		stored := base64.StdEncoding.EncodedLen(len(b.gz))
		if stored < smallPart {
			t.Fatalf("%s: %d bytes stored, under smallPart: pick a longer one", b.name, stored)
		}
		cw := &countWriter{}
		zw, _ := gzip.NewWriterLevel(cw, gzip.BestCompression)
		_, _ = fmt.Fprintf(zw, `{"data":"%s"}`, base64.StdEncoding.EncodeToString(b.gz))
		_ = zw.Close()
		size := float64(len(b.gz))
		if hi := size*(1+gzipMargin) + gzipSlack; float64(cw.n) > hi {
			t.Errorf("%s: compresses to %d, over the upper bound %.0f", b.name, cw.n, hi)
		}
		if lo := size * (1 - gzipMarginLow); b.lower && stored >= windowPart && deflated(b.gz) && float64(cw.n) < lo {
			t.Errorf("%s: compresses to %d, under the lower bound %.0f", b.name, cw.n, lo)
		}
		t.Logf("%s: %d bytes compress to %.4f of them", b.name, len(b.gz), float64(cw.n)/size)
	}
}
