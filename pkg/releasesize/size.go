// Package releasesize measures the Helm release a chart's install stores
// (the Secret driver's json, gzip and base64), bounded first and encoded
// exactly only where the release-size check's verdict depends on it.
package releasesize

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"runtime"
	"sort"
	"sync"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/model"
)

// Lines of the release-size check (pkg/check: a warning from 75 % of
// model.ReleaseLimit, an error over 100 %): the exact encoding runs only when
// one of them lies between the bounds of the release's size.
const (
	releaseWarnLine  = model.ReleaseWarn * model.ReleaseLimit
	releaseLimitLine = model.ReleaseLimit
)

// Input is what Helm stores as a release: the chart as loaded, the
// user values and the rendered manifest (added template by template with
// AddManifest).
type Input struct {
	Chart           *chart.Chart
	Values          map[string]any // the user values of the install
	Name, Namespace string
	manifest        bytes.Buffer
}

// AddManifest appends a rendered template to the manifest as Helm writes
// it: a "# Source:" line naming the template, then its text.
func (r *Input) AddManifest(source, text string) {
	r.manifest.WriteString("---\n# Source: ")
	r.manifest.WriteString(source)
	r.manifest.WriteString("\n")
	r.manifest.WriteString(text)
	r.manifest.WriteString("\n")
}

// Size encodes the release as Helm's Secret driver does (json, gzip at
// best compression, base64) where the check's verdict depends on it, and
// lists the chart's files by weight. Best compression costs about 60 ms
// of CPU a megabyte of release JSON, more than the rest of a package's
// checks, so bounds come first, each stage only for a release with a line
// (warning or limit) between the bounds of the one before:
//
//  1. bounds: part by part, nothing compressed (a fraction of a
//     millisecond);
//  2. measureTwins: the same with the twins (the raw YAML beside its
//     blob, the widest part of 1) compressed alone at twinLevel, the
//     smallest first, until no line lies between (the twins of a release
//     cost about half of 3);
//  3. streamBounds: the whole release JSON compressed at streamLevel, only
//     where its bounds may take a line out of those of 1 and 2
//     (streamMayDecide);
//  4. exact.
//
// Each stage's bounds hold the size, so the range it lies in is their
// intersection. Where a stage decides, Bytes is the least upper bound
// found and Exact is false.
func (r *Input) Size() *model.ReleaseSize { return r.sizeStaged(nil) }

// stageLog records the stages size ran and how long each took by clock,
// for tests.
type stageLog struct {
	clock               func() time.Duration
	twin, stream, exact bool
	twinBytes           int              // of twins compressed
	took                [4]time.Duration // bounds, measureTwins, streamBounds, exact
}

func (r *Input) sizeStaged(log *stageLog) *model.ReleaseSize {
	var t0 time.Duration
	if log != nil {
		t0 = log.clock()
	}
	lap := func(i int) {
		if log != nil {
			now := log.clock()
			log.took[i] += now - t0
			t0 = now
		}
	}
	out := &model.ReleaseSize{Files: chartWeights(r.Chart)}
	p := r.parts()
	lo, hi := p.bounds(ratioTwin)
	lap(0)
	out.Bytes = hi
	if !straddles(lo, hi) {
		return out
	}
	if len(p.twins) > 0 {
		tlo, thi, decided := p.measureTwins(lo, hi)
		lap(1)
		if log != nil {
			log.twin, log.twinBytes = true, p.measured
		}
		lo, hi = tlo, thi
		out.Bytes = hi
		if decided {
			return out
		}
	}
	if streamMayDecide(lo, hi) {
		slo, shi, ok := r.streamBounds()
		lap(2)
		if log != nil {
			log.stream = true
		}
		if ok {
			lo, hi = max(lo, slo), min(hi, shi)
			out.Bytes = hi
			if !straddles(lo, hi) {
				return out
			}
		}
	}
	n, ok := r.exact()
	lap(3)
	if log != nil {
		log.exact = true
	}
	if !ok {
		return nil
	}
	out.Bytes, out.Exact = n, true
	return out
}

// straddles reports whether a line of the release-size check lies in
// [lo, hi]: whether the verdict depends on where in between the exact
// size is.
func straddles(lo, hi int64) bool {
	for _, line := range []float64{releaseWarnLine, releaseLimitLine} {
		if float64(lo) <= line && line <= float64(hi) {
			return true
		}
	}
	return false
}

// streamMayDecide reports whether streamBounds may take a line of the
// check out of [lo, hi]: the whole JSON is worth compressing only when a
// line lies farther from lo than streamHi reaches above the exact size
// (then its upper bound may fall under the line), or farther from hi than
// streamLo reaches below a size that compresses as it usually does (its
// lower bound may rise over the line).
func streamMayDecide(lo, hi int64) bool {
	for _, line := range []float64{releaseWarnLine, releaseLimitLine} {
		if float64(lo) <= line && line <= float64(hi) && (float64(lo)*streamHi < line || float64(hi)*streamLo > line) {
			return true
		}
	}
	return false
}

// exact encodes the release as Helm's Secret driver does
// (helm.sh/helm/v3/pkg/storage/driver, encodeRelease: json.Marshal, gzip
// at BestCompression, base64) and returns the length of the base64 text.
// The JSON is streamed into the compressor (writeReleaseJSON), never held
// whole: memory stays at the compressor's state and a buffer.
func (r *Input) exact() (int64, bool) {
	zw := exactWriters.get()
	defer exactWriters.put(zw)
	n, ok := r.compressedLen(zw)
	return int64(base64.StdEncoding.EncodedLen(int(n))), ok
}

// compressedLen is the length of the release JSON streamed through zw
// (reset to count its output).
func (r *Input) compressedLen(zw interface {
	io.WriteCloser
	Reset(io.Writer)
}) (int64, bool) {
	cw := &countWriter{}
	zw.Reset(cw)
	bw := bufio.NewWriterSize(zw, 32<<10)
	if writeReleaseJSON(bw, r.release()) != nil || bw.Flush() != nil || zw.Close() != nil {
		return 0, false
	}
	return cw.n, true
}

// streamBounds bounds the encoded release by compressing its JSON stream
// at streamLevel with the standard library's gzip, Helm's own: under half
// the cost of the exact encoding, within a per cent of it from above.
// TestReleaseBoundsHold and TestStreamBoundsHold hold the exact size
// between the bounds.
func (r *Input) streamBounds() (lo, hi int64, ok bool) {
	zw := streamWriters.get()
	defer streamWriters.put(zw)
	c, ok := r.compressedLen(zw)
	if !ok {
		return 0, 0, false
	}
	n := float64(c)
	return int64(base64.StdEncoding.EncodedLen(int(n * streamLo))), int64(base64.StdEncoding.EncodedLen(int(n * streamHi))), true
}

// streamLevel and the range of the exact size in multiples of what it
// gives. The standard library's levels 4 to 9 share one lazy matcher and
// one block coder (a block every 16 Ki tokens, its Huffman codes built
// for it): a lower level only gives up sooner on the hash chains, so its
// output is the best compression's or a little larger, and where
// matches are few (random and base64 parts) it is the same. klauspost's
// levels are cheaper, but its block coder splits blocks where the
// statistics change: on text whose alphabet changes every few KiB it
// comes out 3 % under Helm's encoding, and no bound above holds.
// Measured at level 6 on Cozystack's charts, real-shaped releases, such
// adversarial text and text of few words, near and far repeats:
// 0.9991–1.059 times the exact encoding (the most on releases of CRDs
// that compress ten to one, where the longer search finds much more;
// 1.007–1.009 on provider releases). streamHi leaves five times the
// largest deficit seen.
const (
	streamLevel = 6
	streamLo    = 1 / 1.08
	streamHi    = 1.005
)

// streamWriters are reused gzip writers at streamLevel.
var streamWriters = newWriters(func() *gzip.Writer { zw, _ := gzip.NewWriterLevel(io.Discard, streamLevel); return zw })

// exactWriters are reused gzip writers at best compression (each holds
// about a megabyte of compressor state).
var exactWriters = newWriters(func() *gzip.Writer { zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestCompression); return zw })

// release is the release Helm would store.
func (r *Input) release() *release.Release {
	return &release.Release{
		Name:      r.Name,
		Namespace: r.Namespace,
		Version:   1,
		Chart:     r.Chart,
		Config:    r.Values,
		Manifest:  r.manifest.String(),
		Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete",
			FirstDeployed: fixedTime, LastDeployed: fixedTime},
	}
}

var fixedTime = helmTime()

// bounds is a lower and an upper bound of the encoded release (the length
// of the base64 text exact returns), part by part, at a fraction of the
// cost of compressing it. Gzip compresses each part of the release JSON
// within a 32 KiB window, so parts of hundreds of KiB compress about as
// they would alone: the bounds add up bounds of the parts.
//
//   - The chart's small files, metadata, values and the rest of the
//     release count uncompressed (upper), zero (lower).
//   - A gzip file (a blob) is stored base64 in the JSON, and base64 of
//     deflate data compresses back to about the bytes it encodes: its
//     size plus gzipMargin and gzipSlack (upper), less gzipMarginLow
//     (lower). The lower side holds only for
//     parts longer than gzip's window (windowPart) of compressed data (deflated: the stream starts with a dynamic-Huffman
//     block, as every compressor writes for text); other gzip files count
//     zero (lower).
//   - The raw YAML a blob of the chart inflates to (the gzip trailer's
//     size and CRC-32 match it: a twin) counts its blob's size times
//     twinRatio's range: what gzip at best compression makes of the
//     base64 of a provider manifest, against the gzip of the manifest
//     itself (about 1.9: base64 hides most of the repeats gzip finds in
//     the raw text, but never all); a blob made at a lower level (XFL
//     not 2) is larger, so the lower side is lower for it.
//   - Any other large part counts the worst ratio gzip level 1 (worse
//     than Helm's best compression) gets on two 32 KiB samples of it,
//     plus 5 % (upper), zero (lower).
//   - The manifest's long base64 values of gzip data (a ConfigMap's blob)
//     count as the bytes they encode, within the same margins (a base64 text
//     never compresses to more than the bytes it encodes: 6 bits a
//     character, what Huffman coding alone gives its 64 symbols).
//
// TestReleaseBoundsHold holds the exact size between the bounds over
// generated and real-shaped charts, blobs of every gzip level, random and
// compressible data.
func (r *Input) bounds() (lo, hi int64) {
	return r.parts().bounds(ratioTwin)
}

// releaseParts are bounds of the release's encoded size (in compressed
// bytes, before base64) without its twins, and the twins, whose share
// bounds counts by what a twinBound gives.
type releaseParts struct {
	lo, hi float64
	twins  []twin
	// pos is where the next part starts in the release JSON, and
	// lastGzip where the last gzip part started; both at most the true
	// offsets (escapes and punctuation not counted), so that their
	// difference is at most the true distance.
	pos, lastGzip int
	// measured is how many bytes of twins measureTwins compressed.
	measured int
}

// twin is a raw YAML file of the chart beside the blob that inflates to
// it; lower says whether it counts on the lower side (windowPart).
type twin struct {
	yaml, gz []byte
	lower    bool
}

// twinBound bounds what gzip at best compression makes of the base64 of a
// twin, in compressed bytes.
type twinBound func(t twin) (lo, hi float64)

// ratioTwin bounds a twin by its blob's size (twinRatio): no compression.
func ratioTwin(t twin) (lo, hi float64) {
	l, h := twinRatio(t.gz, len(t.yaml))
	return l * float64(len(t.gz)), h * float64(len(t.gz))
}

// bounds adds the twins' share (tb) to the rest and encodes both sides as
// base64 lengths.
func (p *releaseParts) bounds(tb twinBound) (lo, hi int64) {
	return p.boundsBy(func(i int) (float64, float64) { return tb(p.twins[i]) })
}

// boundsBy is bounds with the twins' share given by their index.
func (p *releaseParts) boundsBy(tb func(i int) (lo, hi float64)) (lo, hi int64) {
	l, h := p.lo, p.hi
	for i, t := range p.twins {
		tl, th := tb(i)
		if t.lower {
			l += tl
		}
		h += th
	}
	return int64(base64.StdEncoding.EncodedLen(int(l))), int64(base64.StdEncoding.EncodedLen(int(h)))
}

// parts measures the release part by part (see bounds), leaving the twins
// to be counted. It follows the order in which the release JSON holds the
// parts (writeReleaseJSON) to know how far apart its gzip parts lie.
func (r *Input) parts() *releaseParts {
	p := &releaseParts{hi: 1024, lastGzip: -window} // the release's own fields, JSON punctuation
	c := r.Chart
	jsonLen := func(v any) int {
		js, err := json.Marshal(v)
		if err != nil {
			return 0
		}
		return len(js)
	}
	meta, lock, values, config := jsonLen(c.Metadata), jsonLen(c.Lock), jsonLen(c.Values), jsonLen(r.Values)
	p.hi += float64(meta + lock + values + config)
	p.pos = meta + lock
	twins := yamlTwins(c.Files)
	for _, f := range c.Templates {
		p.hi += float64(len(f.Name)) + 32
		p.pos += len(f.Name)
		p.part(f.Data, true)
	}
	p.pos += values
	p.part(c.Schema, true)
	for i, f := range c.Files {
		p.hi += float64(len(f.Name)) + 32
		p.pos += len(f.Name)
		if gz := twins[i]; gz != nil {
			n := base64.StdEncoding.EncodedLen(len(f.Data))
			p.twins = append(p.twins, twin{yaml: f.Data, gz: gz, lower: n >= windowPart})
			p.pos += n
			continue
		}
		p.part(f.Data, true)
	}
	p.pos += config
	m := r.manifest.Bytes()
	rest, long := splitLongBase64(m)
	start := p.pos
	var head [48]byte
	for _, span := range long {
		v := m[span[0]:span[1]]
		p.pos = start + span[0]
		n, err := base64.StdEncoding.Decode(head[:], v[:min(len(v), 64)&^3])
		p.gzip(len(v), float64(len(v))*3/4, err == nil && deflated(head[:n]))
	}
	p.part(rest, false)
	return p
}

// part adds the bounds of one part of the release (base64-encoded in the
// JSON when b64) that starts at p.pos, and moves p.pos past it.
func (p *releaseParts) part(data []byte, b64 bool) {
	n := len(data)
	if b64 {
		n = base64.StdEncoding.EncodedLen(n)
	}
	switch {
	case b64 && isGzip(data):
		p.gzip(n, float64(len(data)), deflated(data))
	case n < smallPart:
		p.hi += float64(n) * 1.1 // JSON escapes
	default:
		p.hi += sampleRatio(data, b64) * 1.05 * float64(n)
	}
	p.pos += n
}

// gzip adds the bounds of the base64 of a gzip file (stored bytes long in
// the JSON, from p.pos; size bytes decoded). It counts on the lower side
// when deflated and either no other gzip part starts within gzip's window
// before it (then it shares no long string with anything gzip can reach
// back to: two copies of a blob, in the chart and in its ConfigMap, or two
// blobs of nearly the same YAML, farther apart than that compress each on
// its own), or it is longer than the window (windowPart), so that even a
// copy of it right before it lies out of reach.
func (p *releaseParts) gzip(stored int, size float64, deflated bool) {
	if stored < smallPart {
		p.hi += float64(stored) * 1.1
	} else {
		p.hi += size*(1+gzipMargin) + gzipSlack
		if deflated && (stored >= windowPart || p.pos-p.lastGzip >= window) {
			p.lo += size * (1 - gzipMarginLow)
		}
	}
	p.lastGzip = p.pos
}

// Margins of bounds, held by TestReleaseBoundsHold.
const (
	// smallPart is the length (as stored in the JSON) under which a part
	// counts uncompressed.
	smallPart = 8 << 10
	// gzipMargin and gzipMarginLow are how far from its own size the
	// base64 of deflate data of smallPart or more compresses, up and
	// down, and gzipSlack what a part adds up regardless of its size:
	// measured 0.999–1.016, 0.3–0.5 % and 40–130 bytes over it above.
	// The upper side holds by what deflate can do with base64: a
	// Huffman code for a block's symbols is never longer on average
	// than the 6 bits a character its 64 symbols need, so a block costs
	// at most the bytes its characters encode, plus its code tables
	// (tens of bytes a block of 16 Ki symbols: the 0.3 %), plus where the
	// part shares its first and last block with other text.
	gzipMargin    = 0.01
	gzipSlack     = 256
	gzipMarginLow = 0.015
	// windowPart is the length (as stored) from which a part counts on the
	// lower side wherever it lies: a repeat of it then lies beyond gzip's
	// window and compresses on its own.
	windowPart = 33 << 10
	// window is gzip's window, the farthest back a match reaches: parts
	// farther apart (in bytes of the JSON) compress each on its own.
	window = 32 << 10
)

// twinRatio is the range of what gzip at best compression makes of the
// base64 of a YAML file, in multiples of the size of gz, its gzip: a blob
// written at best compression (XFL 2 in its header, as GNU gzip -9, Go's
// and klauspost's BestCompression write) is the smallest gzip of the YAML,
// so the ratio is higher than for a blob of a lower level.
func twinRatio(gz []byte, yamlSize int) (lo, hi float64) {
	lo, hi = twinLo, twinHi
	if len(gz) > 8 && gz[8] == 2 {
		lo = twinLoBest
	}
	if yamlSize < twinLarge {
		hi = twinHiSmall
	}
	return lo, hi
}

// The ratios twinRatio gives. Measured on Cluster API's CRDs and
// generated manifests, blobs at best compression: 1.64–2.06 for files of
// 100 KB and more, up to 2.86 for smaller ones (one small CRD repeats
// itself more in base64 than in the raw); blobs of level 6 (XFL 0) 2 %
// lower, of level 1 (XFL 4) 1.29–1.41.
const (
	twinLoBest  = 1.55 // blob at best compression
	twinLo      = 1.20 // blob of any other level
	twinHi      = 2.30 // YAML of twinLarge or more
	twinHiSmall = 3.20 // smaller YAML
	twinLarge   = 256 << 10
)

// deflated reports whether gz is a gzip member whose deflate stream starts
// with a dynamic-Huffman block, as compressors write for data that
// compresses: its bytes do not compress again.
func deflated(gz []byte) bool {
	if !isGzip(gz) || len(gz) < 10 || gz[2] != 8 {
		return false
	}
	flg, i := gz[3], 10
	if flg&0x04 != 0 { // FEXTRA
		if len(gz) < i+2 {
			return false
		}
		i += 2 + int(binary.LittleEndian.Uint16(gz[i:]))
	}
	for _, bit := range []byte{0x08, 0x10} { // FNAME, FCOMMENT: zero-terminated
		if flg&bit != 0 {
			e := bytes.IndexByte(gz[min(i, len(gz)):], 0)
			if e < 0 {
				return false
			}
			i += e + 1
		}
	}
	if flg&0x02 != 0 { // FHCRC
		i += 2
	}
	return i < len(gz) && (gz[i]>>1)&3 == 2
}

// yamlTwins finds, for each file of files, the gzip file of files that
// inflates to it (by its trailer: the size modulo 2^32 and the CRC-32 of
// the content): the raw YAML shipped beside its blob.
func yamlTwins(files []*chart.File) map[int][]byte {
	type trailer struct{ size, crc uint32 }
	blobs := map[trailer][]byte{}
	for _, f := range files {
		if n := len(f.Data); n >= 18 && deflated(f.Data) {
			blobs[trailer{binary.LittleEndian.Uint32(f.Data[n-4:]), binary.LittleEndian.Uint32(f.Data[n-8:])}] = f.Data
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	sizes := map[uint32]bool{}
	for t := range blobs {
		sizes[t.size] = true
	}
	var out map[int][]byte
	for i, f := range files {
		if len(f.Data) < smallPart || !sizes[uint32(len(f.Data))] || isGzip(f.Data) {
			continue
		}
		if gz := blobs[trailer{uint32(len(f.Data)), crc32.ChecksumIEEE(f.Data)}]; gz != nil {
			if out == nil {
				out = map[int][]byte{}
			}
			out[i] = gz
		}
	}
	return out
}

// splitLongBase64 takes the long base64 values of gzip data (longValue
// starting with the gzip magic: a blob in a ConfigMap) out of a manifest:
// the rest, and where in m each value taken starts and ends. Sampling the
// compression of the base64 of compressed bytes costs the most and says
// the least; other base64 (of text, say) compresses well and is sampled.
func splitLongBase64(m []byte) (rest []byte, long [][2]int) {
	if len(m) < manifest.LongScalarMin {
		return m, nil
	}
	taken := 0
	for i := 0; i < len(m); {
		lineEnd, next := len(m), len(m)
		if e := bytes.IndexByte(m[i:], '\n'); e >= 0 {
			lineEnd, next = i+e, i+e+1
		}
		if vs, ok := manifest.LongValue(m[i:lineEnd], manifest.LongScalarMin); ok && bytes.HasPrefix(m[i+vs:], []byte("H4sI")) {
			if rest == nil {
				rest = make([]byte, 0, len(m)/4)
			}
			rest = append(rest, m[len(rest)+taken:i+vs]...)
			long = append(long, [2]int{i + vs, lineEnd})
			taken += lineEnd - (i + vs)
		}
		i = next
	}
	if taken == 0 {
		return m, nil
	}
	return append(rest, m[len(rest)+taken:]...), long
}

// sampleBufs are reused buffers for the base64 of a sample.
var sampleBufs sync.Pool

// estimators are reused gzip writers at sampleLevel (one costs about a MiB
// of state to set up).
var estimators sync.Pool

// sampleLevel is the gzip level of the samples: klauspost's fastest, which
// compresses worse than Helm's best compression (by about a fifth on YAML:
// the estimate errs high, never low, on the samples).
const sampleLevel = 1

// sampleRatio is the worse compression ratio of two samples of data (its
// start and its middle; base64-encoded first when b64) at sampleLevel.
func sampleRatio(data []byte, b64 bool) float64 {
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
	offs := []int{0, max(0, len(data)/2-raw/2)}
	if offs[1] == 0 {
		offs = offs[:1] // data no longer than a sample: both are the same
	}
	for _, off := range offs {
		p := data[off:min(len(data), off+raw)]
		if b64 {
			n := base64.StdEncoding.EncodedLen(len(p))
			base64.StdEncoding.Encode(enc[:n], p)
			p = enc[:n]
		}
		cw := &countWriter{}
		w, _ := estimators.Get().(*kgzip.Writer)
		if w == nil {
			w, _ = kgzip.NewWriterLevel(cw, sampleLevel)
		} else {
			w.Reset(cw)
		}
		_, _ = w.Write(p)
		_ = w.Close()
		estimators.Put(w)
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

// writers keeps a few gzip writers for reuse. Unlike a sync.Pool, which
// drops what it holds at every other collection, it keeps them across
// collections: a writer holds about a megabyte of compressor state, and
// allocating one anew each time a release is compressed churns the heap
// by that much.
type writers[W any] struct {
	free  chan W
	alloc func() W
}

func newWriters[W any](alloc func() W) *writers[W] {
	return &writers[W]{free: make(chan W, runtime.GOMAXPROCS(0)), alloc: alloc}
}

func (p *writers[W]) get() W {
	select {
	case w := <-p.free:
		return w
	default:
		return p.alloc()
	}
}

func (p *writers[W]) put(w W) {
	select {
	case p.free <- w:
	default:
	}
}
