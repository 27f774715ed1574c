// Package chartbomb holds hostile chart parts for the tests of the loader
// and the render sandbox: template bombs, YAML alias bombs, chart archives.
package chartbomb

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// ProviderTemplate is a template of a chart worth rendering.
const ProviderTemplate = `apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: CoreProvider
metadata:
  name: cluster-api
  namespace: {{ .Release.Namespace }}
spec:
  version: v1.10.1-core
`

// Template bombs, as an attacker would upload them.
const (
	MemoryBomb = `{{ repeat 1000000000000 "aaaaaaaaaa" }}` + "\n"
	TimeBomb   = `{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}` + "\n"
	// 400 × 10 KB = 4 MB of output.
	OutputBomb = `{{ range until 400 }}{{ repeat 10000 "a" }}{{ end }}` + "\n"
)

// AliasBomb is YAML of a few kilobytes whose last key expands to
// fanout^(depth+1) scalars: what Helm's YAML library accepts (its alias ratio
// check wants 1 % of the nodes decoded outside aliases: the padding) and
// decodes in full.
func AliasBomb(key string, fanout, depth int) string {
	var b strings.Builder
	b.WriteString(Padding(key, pow(fanout, depth+1)))
	fmt.Fprintf(&b, "%s0: &a0 [%s]\n", key, strings.TrimSuffix(strings.Repeat("x,", fanout), ","))
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "%s%d: &a%d [%s]\n", key, d, d, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", d-1), fanout), ","))
	}
	return b.String()
}

func pow(a, b int) int {
	n := 1
	for range b {
		n *= a
	}
	return n
}

// Padding is a list of n/50 plain scalars under key+"pad" (1 % of n: what
// Helm's YAML library wants decoded outside aliases).
func Padding(key string, n int) string {
	return key + "pad: [" + strings.TrimSuffix(strings.Repeat("0,", n/50+1), ",") + "]\n"
}

// Tgz packs files (name -> content) as a chart archive, each under dir/.
func Tgz(t testing.TB, dir string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := tw.WriteHeader(&tar.Header{Name: dir + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[n])
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// SubChartYAML is the Chart.yaml of a subchart named sub.
const SubChartYAML = "apiVersion: v2\nname: sub\nversion: 0.1.0\n"
