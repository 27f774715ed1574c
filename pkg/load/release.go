package load

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/pinseal/pinseal/pkg/model"
)

// ReleaseLimit is the most a Kubernetes Secret (hence a Helm release) may
// hold: 1 MiB.
const ReleaseLimit = model.ReleaseLimit

// releaseScreen is the share of ReleaseLimit under which a quick upper
// estimate of the release size is trusted, and the exact encoding (gzip at
// best compression, slow on megabytes) is skipped: the release-size
// warning line (75 %).
const releaseScreen = 0.75

// estimateLevels are the gzip levels of the quick estimates, cheapest
// first. klauspost's fastest level compresses worse than Helm's best
// compression (by about a fifth on YAML: the estimate errs high, never
// low, on the samples) at a quarter of level 7's cost; level 7 comes
// within a few per cent of the best compression and is tried only on a
// release the fast estimate puts at the screen, before the exact encoding
// (stdlib gzip at best compression: tens of times slower again).
var estimateLevels = []int{1, 7}

// releaseInput is what Helm stores as a release: the chart as loaded, the
// user values and the rendered manifest.
type releaseInput struct {
	chart           *chart.Chart
	config          map[string]any
	name, namespace string
	manifest        strings.Builder
}

func (r *releaseInput) addManifest(source, text string) {
	r.manifest.WriteString("---\n# Source: ")
	r.manifest.WriteString(source)
	r.manifest.WriteString("\n")
	r.manifest.WriteString(text)
	r.manifest.WriteString("\n")
}

// size encodes the release as Helm's Secret driver does (json, gzip at
// best compression, base64) and lists the chart's files by weight. Best
// compression is slow on megabytes, so quick upper estimates (estimate, at
// each of estimateLevels) come first; only a release they all put at or
// over the release-size warning line is encoded exactly.
func (r *releaseInput) size() *model.ReleaseSize {
	out := &model.ReleaseSize{Files: chartWeights(r.chart)}
	for _, level := range estimateLevels {
		if est := r.estimate(level); float64(est) < releaseScreen*ReleaseLimit {
			out.Bytes = est
			return out
		}
	}
	n, ok := r.exact()
	if !ok {
		return nil
	}
	out.Bytes, out.Exact = n, true
	return out
}

// exact encodes the release as Helm's Secret driver does and returns the
// length of the base64 text.
func (r *releaseInput) exact() (int64, bool) {
	rel := &release.Release{
		Name:      r.name,
		Namespace: r.namespace,
		Version:   1,
		Chart:     r.chart,
		Config:    r.config,
		Manifest:  r.manifest.String(),
		Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete",
			FirstDeployed: fixedTime, LastDeployed: fixedTime},
	}
	js, err := json.Marshal(rel)
	if err != nil {
		return 0, false
	}
	cw := &countWriter{}
	w, err := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if err != nil {
		return 0, false
	}
	_, _ = w.Write(js)
	_ = w.Close()
	return int64(base64.StdEncoding.EncodedLen(int(cw.n))), true
}

var fixedTime = helmTime()

// estimate is an upper estimate of the encoded release, part by part, at a
// fraction of the cost of compressing it: a small part and the rendered
// manifest count uncompressed;
// a gzip file (stored base64 in the JSON) counts its own size, which is what
// base64 of incompressible bytes compresses back to, plus a margin; any
// other part counts the worst ratio that a fast gzip level (level, worse
// than Helm's best compression) gets on two 32 KiB samples of it, plus a
// 5 % margin.
func (r *releaseInput) estimate(level int) int64 {
	total := 4096.0 // release metadata, info, Chart.yaml, values
	add := func(data []byte, b64 bool) {
		n := len(data)
		if b64 {
			n = base64.StdEncoding.EncodedLen(n)
		}
		switch {
		case n < 32<<10:
			total += float64(n) * 1.1 // JSON escapes
		case isGzip(data):
			total += float64(len(data)) * 1.03
		default:
			total += sampleRatio(data, b64, level) * 1.05 * float64(n)
		}
	}
	var rec func(c *chart.Chart)
	rec = func(c *chart.Chart) {
		for _, f := range c.Templates {
			add(f.Data, true)
		}
		for _, f := range c.Files {
			add(f.Data, true)
		}
		for _, d := range c.Dependencies() {
			rec(d)
		}
	}
	rec(r.chart)
	rest, b64 := splitLongBase64([]byte(r.manifest.String()))
	// A base64 text never compresses to more than the bytes it encodes
	// (6 bits a character, what Huffman coding alone gives its 64
	// symbols), plus block overhead: the margin of gzip files above.
	total += float64(b64) * 3 / 4 * 1.03
	add(rest, false)
	return int64(base64.StdEncoding.EncodedLen(int(total)))
}

// splitLongBase64 takes the long base64 values of gzip data (longValue
// starting with the gzip magic: a blob in a ConfigMap) out of a manifest:
// the rest, and the length of what was taken. Sampling the compression of
// the base64 of compressed bytes costs the most and says the least; other
// base64 (of text, say) compresses well and is sampled.
func splitLongBase64(m []byte) (rest []byte, b64 int) {
	if len(m) < longScalarMin {
		return m, 0
	}
	for i := 0; i < len(m); {
		lineEnd, next := len(m), len(m)
		if e := bytes.IndexByte(m[i:], '\n'); e >= 0 {
			lineEnd, next = i+e, i+e+1
		}
		if vs, ok := longValue(m[i:lineEnd], longScalarMin); ok && bytes.HasPrefix(m[i+vs:], []byte("H4sI")) {
			if rest == nil {
				rest = make([]byte, 0, len(m)/4)
			}
			rest = append(rest, m[len(rest)+b64:i+vs]...)
			b64 += lineEnd - (i + vs)
		}
		i = next
	}
	if b64 == 0 {
		return m, 0
	}
	return append(rest, m[len(rest)+b64:]...), b64
}

// sampleBufs are reused buffers for the base64 of a sample.
var sampleBufs sync.Pool

// estimators are reused gzip writers, by level (one costs about a MiB of
// state to set up).
var estimators [kgzip.BestCompression + 1]sync.Pool

// sampleRatio is the worse compression ratio of two samples of data (its
// start and its middle; base64-encoded first when b64) at gzip level (one
// of estimateLevels).
func sampleRatio(data []byte, b64 bool, level int) float64 {
	writers := &estimators[level]
	const raw = 24 << 10 // 32 KiB once base64-encoded
	worst := 0.0
	var enc []byte
	if b64 {
		bp, _ := sampleBufs.Get().(*[]byte)
		if bp == nil {
			b := make([]byte, base64.StdEncoding.EncodedLen(raw))
			bp = &b
		}
		defer sampleBufs.Put(bp)
		enc = *bp
	}
	for _, off := range []int{0, max(0, len(data)/2-raw/2)} {
		p := data[off:min(len(data), off+raw)]
		if b64 {
			n := base64.StdEncoding.EncodedLen(len(p))
			base64.StdEncoding.Encode(enc[:n], p)
			p = enc[:n]
		}
		cw := &countWriter{}
		w, _ := writers.Get().(*kgzip.Writer)
		if w == nil {
			w, _ = kgzip.NewWriterLevel(cw, level)
		} else {
			w.Reset(cw)
		}
		_, _ = w.Write(p)
		_ = w.Close()
		writers.Put(w)
		worst = max(worst, float64(cw.n)/float64(len(p)))
	}
	return min(worst, 1.0)
}

// chartWeights lists the chart's files (templates, values, files, and those
// of subcharts) with their size in the release JSON, largest first.
func chartWeights(c *chart.Chart) []model.FileWeight {
	var out []model.FileWeight
	var rec func(c *chart.Chart, prefix string)
	rec = func(c *chart.Chart, prefix string) {
		for _, f := range c.Templates {
			out = append(out, model.FileWeight{Path: prefix + f.Name, Bytes: int64(base64.StdEncoding.EncodedLen(len(f.Data)))})
		}
		for _, f := range c.Files {
			out = append(out, model.FileWeight{Path: prefix + f.Name, Bytes: int64(base64.StdEncoding.EncodedLen(len(f.Data)))})
		}
		for _, d := range c.Dependencies() {
			rec(d, prefix+"charts/"+d.Name()+"/")
		}
	}
	rec(c, "")
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Path < out[j].Path
	})
	return out
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

func helmTime() helmtime.Time { return helmtime.Time{Time: time.Unix(1700000000, 0).UTC()} }
