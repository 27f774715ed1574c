package load

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"sort"
	"strings"
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
// best compression, slow on megabytes) is skipped. It stays below the
// release-size warning line (75 %).
const releaseScreen = 0.70

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
// best compression, base64) and lists the chart's files by weight. A
// quick estimate (fast gzip over samples) that says the release is far
// below the limit is taken as is.
func (r *releaseInput) size() *model.ReleaseSize {
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
		return nil
	}
	out := &model.ReleaseSize{Files: chartWeights(r.chart)}
	if est := estimate(js); float64(est) < releaseScreen*ReleaseLimit {
		out.Bytes = est
		return out
	}
	cw := &countWriter{}
	w, err := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if err != nil {
		return nil
	}
	_, _ = w.Write(js)
	_ = w.Close()
	out.Bytes, out.Exact = int64(base64.StdEncoding.EncodedLen(int(cw.n))), true
	return out
}

var fixedTime = helmTime()

// estimate is an upper estimate of base64(gzip(js)): the worst ratio the
// fastest gzip level gets on samples spread over the text (fast gzip
// compresses less than best compression), with a margin.
func estimate(js []byte) int64 {
	const sample, samples = 16 << 10, 8
	if len(js) <= sample*samples {
		cw := &countWriter{}
		w, _ := kgzip.NewWriterLevel(cw, kgzip.BestSpeed)
		_, _ = w.Write(js)
		_ = w.Close()
		return int64(base64.StdEncoding.EncodedLen(int(cw.n)))
	}
	worst := 0.0
	step := (len(js) - sample) / (samples - 1)
	for i := range samples {
		part := js[i*step : i*step+sample]
		cw := &countWriter{}
		w, _ := kgzip.NewWriterLevel(cw, kgzip.BestSpeed)
		_, _ = w.Write(part)
		_ = w.Close()
		worst = max(worst, float64(cw.n)/float64(len(part)))
	}
	return int64(float64(base64.StdEncoding.EncodedLen(len(js))) * min(worst*1.15, 1.01))
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
