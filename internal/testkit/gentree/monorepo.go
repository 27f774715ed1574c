package gentree

import (
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strings"
)

// writeOthers writes opts.Others charts that are not provider packages
// under root/packages and returns how many it wrote: chart j is shaped as
// the measured chart j mod len(measuredOthers) (measuredOthers, from
// MeasuredMonorepo), at its measured path (with a number after the first
// round), its bytes its own (the seed and j).
func writeOthers(root string, opts Options) (int, error) {
	for j := range opts.Others {
		m := measuredOthers[j%len(measuredOthers)]
		rel := m.path
		if k := j / len(measuredOthers); k > 0 {
			rel = fmt.Sprintf("%s-%d", rel, k+1)
		}
		dir := filepath.Join(root, "packages", filepath.FromSlash(rel))
		r := rand.New(rand.NewPCG(opts.Seed, uint64(j)+1<<32))
		for _, f := range otherChart(r, m, path.Base(rel)) {
			if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.name)), f.data); err != nil {
				return j, fmt.Errorf("chart %s: %w", rel, err)
			}
		}
	}
	return opts.Others, nil
}

// otherChart is a chart shaped as m: its files, subcharts, templates and
// their bytes as measured (a template comes out longer than measured only
// when the constructs it must use need more room), its templates using
// the constructs m's use, so the verifier takes it the way it took m for
// the same reasons: a chart that was settled from its templates has no
// provider marker in any template; one that rendered has one (a comment
// naming its components), renders with default values in a render child
// because of its subcharts or constructs, or in process when it has
// neither; one that failed fails the way m did (a missing map indexed or
// read, a `required` value, a `fail`); the empty one renders nothing.
func otherChart(r *rand.Rand, m measuredChart, name string) []file {
	g := &chartGen{r: r, m: m, name: name}
	return g.files()
}

// chartGen writes one chart shaped as a measured one.
type chartGen struct {
	r    *rand.Rand
	m    measuredChart
	name string
	// failed: the failing construct is placed; marked: the marker is.
	failed, marked bool
	// read is the file the .Files construct reads.
	read string
}

func (g *chartGen) files() []file {
	m := g.m
	var out []file
	add := func(name string, data []byte) { out = append(out, file{name, data}) }

	// What the chart's own files and its subcharts' take of the measured
	// counts; the rest are filler files (a Makefile, CRDs, files, docs).
	topFiles := m.files - m.subFiles
	topBytes := m.bytes - m.subBytes
	chartYAML := fmt.Appendf(nil, "apiVersion: v2\nname: %s\ndescription: %s of the platform\ntype: application\nversion: 0.%d.%d\n", g.name, g.name, g.r.IntN(40), g.r.IntN(10))
	add("Chart.yaml", chartYAML)
	topFiles--
	topBytes -= len(chartYAML)
	if m.values > 0 {
		add("values.yaml", g.values(m.values))
		topFiles--
		topBytes -= m.values
	}
	if m.schema > 0 {
		add("values.schema.json", g.schema(m.schema))
		topFiles--
		topBytes -= m.schema
	}
	topFiles -= m.templates
	topBytes -= m.templateBytes

	// Filler of the chart itself; CRDs go there when it has no subchart.
	crdFiles, crdBytes := 0, 0
	if m.subcharts == 0 {
		crdFiles, crdBytes = m.crdFiles, m.crdBytes
	}
	fill := g.filler("", max(topFiles, 0), max(topBytes, 0), crdFiles, crdBytes)
	for _, f := range fill {
		if g.read == "" && f.name != "Makefile" {
			g.read = f.name
		}
	}
	if g.read == "" {
		g.read = "Makefile"
	}
	out = append(out, fill...)
	out = append(out, g.templates("templates/", g.name, m.templates, m.templateBytes, m.actions, m.uses)...)
	if m.subcharts > 0 {
		out = append(out, g.subcharts()...)
	}
	return out
}

// subcharts writes m.subcharts charts under charts/, sharing the measured
// subchart files, bytes and templates.
func (g *chartGen) subcharts() []file {
	m := g.m
	var out []file
	n := m.subcharts
	files, bytes := m.subFiles, m.subBytes
	tpls, tplBytes := m.subTemplates, m.subTemplateBytes
	for k := range n {
		sub := fmt.Sprintf("%s-%s", g.name, subNames[k%len(subNames)])
		dir := "charts/" + sub + "/"
		left := n - k
		// This subchart's share.
		t := tpls / left
		tb := tplBytes / left
		if k == 0 {
			t, tb = tpls-(tpls/n)*(n-1), tplBytes-(tplBytes/n)*(n-1)
		}
		f := files / left
		b := bytes / left
		if k == 0 {
			f, b = files-(files/n)*(n-1), bytes-(bytes/n)*(n-1)
		}
		chartYAML := fmt.Appendf(nil, "apiVersion: v2\nname: %s\nversion: %d.%d.%d\nappVersion: v%d.%d.0\n", sub, 1+g.r.IntN(3), g.r.IntN(20), g.r.IntN(10), g.r.IntN(3), g.r.IntN(30))
		out = append(out, file{dir + "Chart.yaml", chartYAML})
		fl, bl := f-1-t, b-len(chartYAML)-tb
		if fl <= 0 {
			tb += max(bl, 0) // no other file to hold them
		} else {
			vb := min(max(bl/8, 64), max(bl, 1))
			if fl == 1 {
				vb = max(bl, 1)
			}
			out = append(out, file{dir + "values.yaml", g.values(vb)})
			fl--
			bl -= vb
		}
		crdFiles, crdBytes := 0, 0
		if k == 0 {
			crdFiles, crdBytes = min(m.crdFiles, max(fl, 0)), m.crdBytes
		}
		out = append(out, g.filler(dir, max(fl, 0), max(bl, 0), crdFiles, crdBytes)...)
		out = append(out, g.templates(dir+"templates/", sub, t, tb, m.subActions*tb/max(m.subTemplateBytes, 1), m.subUses)...)
		tpls, tplBytes, files, bytes = tpls-t, tplBytes-tb, files-f, bytes-b
	}
	return out
}

var subNames = []string{"operator", "crds", "agent", "webhook", "exporter"}

// templates writes n templates of about total bytes in all under dir,
// using the constructs uses (helpers first when it defines or includes),
// with about actions template actions in all: as many actions a byte as
// the measured templates (a chart of vendored CRDs is text copied
// through, an upstream chart's templates are mostly actions).
func (g *chartGen) templates(dir, chart string, n, total, actions int, uses Construct) []file {
	if n == 0 {
		return nil
	}
	var out []file
	sizes := split(g.r, total, n)
	density := float64(actions) / float64(max(total, 1))
	k := 0
	if uses&(UsesDefine|UsesInclude) != 0 && n > 1 {
		out = append(out, file{dir + "_helpers.tpl", g.helpers(chart, sizes[0], density)})
		k = 1
	}
	for i := k; i < n; i++ {
		t := g.template(chart, i, sizes[i], uses, k == 0 && i == 0, density)
		out = append(out, file{fmt.Sprintf("%s%s-%02d.yaml", dir, tplWords[g.r.IntN(len(tplWords))], i), t})
	}
	return out
}

var tplWords = []string{"deployment", "service", "configmap", "rbac", "secret", "daemonset", "statefulset", "ingress", "job", "webhook", "servicemonitor", "networkpolicy", "pdb", "crd"}

// helpers is a _helpers.tpl of size bytes defining chart.name and
// chart.fullname, then comments (actions at density a byte) and text.
func (g *chartGen) helpers(chart string, size int, density float64) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "{{- define %q -}}\n{{ default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix \"-\" }}\n{{- end }}\n", chart+".name")
	if g.m.took == TookSettled {
		// A chart settled from its files only copies values (render.Inert).
		fmt.Fprintf(&b, "{{- define %q -}}\n{{ include %q . | trunc 63 | trimSuffix \"-\" }}\n{{- end }}\n", chart+".fullname", chart+".name")
	} else {
		fmt.Fprintf(&b, "{{- define %q -}}\n{{ printf \"%%s-%%s\" .Release.Name (include %q .) | trunc 63 | trimSuffix \"-\" }}\n{{- end }}\n", chart+".fullname", chart+".name")
	}
	actions := 6
	for b.Len() < size-40 {
		if float64(actions) < density*float64(b.Len()) {
			fmt.Fprintf(&b, "{{/* %s */}}\n", g.words(3+g.r.IntN(10)))
			actions++
		} else {
			fmt.Fprintf(&b, "%s\n", g.words(3+g.r.IntN(10)))
		}
	}
	return pad(b.String(), size, "{{/*", "*/}}")
}

// template is one template of about size bytes using uses: an action for
// each construct (their output YAML comments), then, room allowing, a
// ConfigMap whose data fills the size. The first template of a chart
// that fails carries the failing action, of one that rendered the marker.
func (g *chartGen) template(chart string, i, size int, uses Construct, defines bool, density float64) []byte {
	m := g.m
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n", chart, valueWords[g.r.IntN(len(valueWords))])
	if defines && uses&UsesInclude != 0 {
		fmt.Fprintf(&b, "{{- define %q }}%s{{ end }}\n", chart+".name", chart)
		if m.took == TookSettled {
			fmt.Fprintf(&b, "{{- define %q }}{{ include %q . }}{{ end }}\n", chart+".fullname", chart+".name")
		} else {
			fmt.Fprintf(&b, "{{- define %q }}{{ .Release.Name }}-{{ include %q . }}{{ end }}\n", chart+".fullname", chart+".name")
		}
	} else if uses&UsesDefine != 0 {
		fmt.Fprintf(&b, "{{- define \"%s.t%02d\" }}%s{{ end }}\n", chart, i, g.words(2))
	}
	if m.took == TookEmpty {
		b.WriteString("{{- if .Values.enabled }}\n# operator.cluster.x-k8s.io objects of the platform\n")
	}
	if !g.failed && m.took == TookFailing {
		g.failed = true
		switch m.failure {
		case "index":
			b.WriteString("# {{ index .Values._cluster \"cluster-domain\" }}\n")
		case "nil":
			b.WriteString("# {{ .Values._namespace.ingress }}\n")
		case "required":
			b.WriteString("# {{ required \"provider is required: set it to one of the supported ones\" .Values.provider }}\n")
		default:
			fmt.Fprintf(&b, "# {{ fail \"the release name should start with %s-\" }}\n", g.name)
		}
	}
	if !g.marked && (m.took == TookRendered || m.took == TookFailing) {
		g.marked = true
		fmt.Fprintf(&b, "# the %s components\n", g.name)
		// What the measured chart's render spent on cryptography: a key
		// and certificate each, a bcrypt hash each.
		for k := range m.certs {
			fmt.Fprintf(&b, "# {{ (genSelfSignedCert \"%s-%d.svc\" nil nil 365).Cert | b64enc }}\n", g.name, k)
		}
		for k := range m.hashes {
			fmt.Fprintf(&b, "# {{ htpasswd \"admin%d\" \"%s\" | b64enc }}\n", k, g.words(1))
		}
	}
	if uses&UsesInclude != 0 {
		fmt.Fprintf(&b, "# {{ include %q . }}\n", chart+".fullname")
	}
	if uses&UsesRange != 0 {
		b.WriteString("{{- range (default (list \"a\" \"b\") .Values.items) }}\n# {{ . }}\n{{- end }}\n")
	}
	if uses&UsesToYaml != 0 {
		b.WriteString("# {{ toYaml (default (dict \"cpu\" \"100m\") .Values.resources) | sha256sum }}\n")
	}
	// A settled chart's templates only copy text (render.Inert): the
	// measured one names tpl or lookup outside an action (a comment).
	if m.took == TookSettled {
		if uses&UsesTpl != 0 {
			b.WriteString("{{/* tpl (default \"{{ .Release.Name }}\" .Values.tplText) . */}}\n")
		}
		if uses&UsesLookup != 0 {
			b.WriteString("{{/* lookup \"v1\" \"Secret\" .Release.Namespace \"credentials\" | len */}}\n")
		}
		uses &^= UsesTpl | UsesLookup
	}
	if uses&UsesTpl != 0 {
		b.WriteString("# {{ tpl (default \"{{ .Release.Name }}\" .Values.tplText) . }}\n")
	}
	if uses&UsesLookup != 0 {
		b.WriteString("# {{ lookup \"v1\" \"Secret\" .Release.Namespace \"credentials\" | len }}\n")
	}
	if uses&UsesFiles != 0 {
		fmt.Fprintf(&b, "# {{ .Files.Get %q | len }}\n", g.read)
	}
	if uses&UsesRequired != 0 {
		b.WriteString("# {{ required \"host is required\" (default \"localhost\" .Values.host) }}\n")
	}
	if uses&UsesFail != 0 {
		b.WriteString("{{- if .Values.broken }}{{ fail \"broken is set\" }}{{ end }}\n")
	}
	if uses&UsesWith != 0 {
		b.WriteString("{{- with .Values.host }}\n# {{ . }}\n{{- end }}\n")
	}
	if uses&UsesVariable != 0 {
		b.WriteString("{{- $release := .Release.Name }}\n# {{ $release }}\n")
	}
	end := ""
	if m.took == TookEmpty {
		end = "{{- end }}\n"
	}
	if room := size - b.Len() - len(end); room > 160 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-%s-%02d\ndata:\n", g.name, chart, i)
		actions := strings.Count(b.String(), "{{")
		for k := 0; b.Len()+len(end)+60 < size; k++ {
			act := uses != 0 && float64(actions) < density*float64(b.Len())
			actions += g.dataLine(&b, chart, k, uses, act)
		}
	}
	return append(pad(b.String(), size-len(end), "#", ""), end...)
}

// dataLine is one entry of a template's ConfigMap, literal text or (act)
// as real templates write one with actions: a value with a default,
// quoted; a block under a condition the default values leave off; the
// chart's name by include. It returns the actions it wrote.
func (g *chartGen) dataLine(b *strings.Builder, chart string, k int, uses Construct, act bool) int {
	w := valueWords[g.r.IntN(len(valueWords))]
	if !act {
		fmt.Fprintf(b, "  %s%d: %q\n", w, k, g.words(2+g.r.IntN(8)))
		return 0
	}
	switch n := g.r.IntN(10); {
	case n < 5:
		fmt.Fprintf(b, "  %s%d: {{ .Values.%s%d | default %q | quote }}\n", w, k, w, k, g.words(1+g.r.IntN(4)))
		return 1
	case n < 8:
		fmt.Fprintf(b, "  {{- if .Values.%s%dEnabled }}\n  %s%d: {{ .Values.%s%d | quote }}\n  {{- end }}\n", w, k, w, k, w, k)
		return 3
	case uses&UsesInclude != 0:
		fmt.Fprintf(b, "  %s%d: {{ include %q . | quote }}\n", w, k, chart+".fullname")
	case g.m.took == TookSettled:
		fmt.Fprintf(b, "  %s%d: {{ .Release.Name | quote }}\n", w, k)
	default:
		fmt.Fprintf(b, "  %s%d: {{ .Release.Name | printf \"%%s-%s\" | quote }}\n", w, k, w)
	}
	return 1
}

// values is a values.yaml of size bytes: the keys the templates read
// (room allowing) and nested keys.
func (g *chartGen) values(size int) []byte {
	var b strings.Builder
	if size > 400 {
		b.WriteString("items:\n- alpha\n- beta\nresources:\n  cpu: 100m\n  memory: 128Mi\ntplText: '{{ .Release.Name }}-text'\nhost: example.org\nbroken: false\n")
	}
	depth := 0
	for k := 0; ; k++ {
		p := strings.Repeat("  ", depth)
		w := valueWords[g.r.IntN(len(valueWords))]
		var line string
		next := depth
		switch g.r.IntN(5) {
		case 0:
			line = fmt.Sprintf("%s# -- %s\n", p, g.words(3+g.r.IntN(8)))
		case 1:
			if depth < 3 {
				line = fmt.Sprintf("%s%s%d:\n%s  %s: %q\n", p, w, k, p, w, g.words(1))
				next++
				break
			}
			fallthrough
		default:
			line = fmt.Sprintf("%s%s%d: %q\n", p, w, k, g.words(1+g.r.IntN(3)))
			if depth > 0 && g.r.IntN(3) == 0 {
				next--
			}
		}
		if b.Len()+len(line) > size-2 {
			break
		}
		b.WriteString(line)
		depth = next
	}
	return pad(b.String(), size, "#", "")
}

// schema is a values.schema.json of size bytes that the values validate
// against (an object of optional properties).
func (g *chartGen) schema(size int) []byte {
	const head, tail = "{\n  \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n  \"type\": \"object\",\n  \"properties\": {\n", "\n  }\n}\n"
	if size < len(head)+len(tail)+80 {
		return padJSON("{\"type\": \"object\"}", size)
	}
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		sep := ",\n"
		if i == 0 {
			sep = ""
		}
		e := fmt.Sprintf("%s    \"%s%d\": {\"description\": %q, \"type\": \"string\"}", sep, valueWords[g.r.IntN(len(valueWords))], 1000+i, g.words(3+g.r.IntN(10)))
		if i > 0 && b.Len()+len(e)+len(tail) > size {
			break
		}
		b.WriteString(e)
	}
	b.WriteString(tail)
	return padJSON(b.String(), size)
}

// filler writes n files of bytes in all under dir: a Makefile first (at
// the chart's root), then crdFiles CRDs of crdBytes under crds/, then
// docs and files. None names a provider marker.
func (g *chartGen) filler(dir string, n, bytes, crdFiles, crdBytes int) []file {
	if n <= 0 {
		return nil
	}
	crdFiles = min(crdFiles, n)
	crdBytes = min(crdBytes, bytes)
	others := n - crdFiles
	if others == 0 || crdFiles == 0 {
		crdBytes = bytes * crdFiles / n
	}
	var out []file
	rest := bytes - crdBytes
	sizes := split(g.r, rest, others)
	for i := range others {
		var name string
		switch {
		case i == 0 && dir == "":
			out = append(out, file{"Makefile", g.makefile(sizes[i])})
			continue
		case i%4 == 1:
			name = fmt.Sprintf("README-%d.md", i)
			if i == 1 {
				name = "README.md"
			}
		case i%4 == 2:
			name = fmt.Sprintf("files/%s-%02d.json", g.words(1), i)
		default:
			name = fmt.Sprintf("files/%s-%02d.yaml", g.words(1), i)
		}
		out = append(out, file{dir + name, g.text(sizes[i], strings.HasSuffix(name, ".json"))})
	}
	for i, s := range split(g.r, crdBytes, crdFiles) {
		out = append(out, file{fmt.Sprintf("%scrds/%s-%02d.yaml", dir, g.words(1), i), g.crd(s)})
	}
	return out
}

func (g *chartGen) makefile(size int) []byte {
	s := fmt.Sprintf("export NAME=%s\nexport NAMESPACE=cozy-%s\n\ninclude ../../../scripts/package.mk\n\nupdate:\n\trm -rf charts\n", g.name, g.name)
	var b strings.Builder
	b.WriteString(s)
	for b.Len() < size-40 {
		fmt.Fprintf(&b, "\t# %s\n", g.words(3+g.r.IntN(8)))
	}
	return pad(b.String(), size, "#", "")
}

// text is a document (or a JSON dashboard) of size bytes.
func (g *chartGen) text(size int, json bool) []byte {
	var b strings.Builder
	if json {
		b.WriteString("{\"panels\": [\n")
		for i := 0; b.Len() < size-80; i++ {
			fmt.Fprintf(&b, "{\"id\": %d, \"title\": %q, \"expr\": \"sum(rate(%s_total[5m]))\"},\n", i, g.words(3), g.words(1))
		}
		b.WriteString("{}]}\n")
		return padJSON(b.String(), size)
	}
	for b.Len() < size-40 {
		fmt.Fprintf(&b, "%s: %s\n", g.words(1), g.words(2+g.r.IntN(12)))
	}
	return pad(b.String(), size, "#", "")
}

// crd is a CustomResourceDefinition-like YAML of size bytes.
func (g *chartGen) crd(size int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %ss.%s.example.org\nspec:\n  group: %s.example.org\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n", g.words(1), g.name, g.name)
	for b.Len() < size-80 {
		fmt.Fprintf(&b, "          %s%d:\n            description: %s\n            type: string\n", g.words(1), g.r.IntN(10000), g.words(4+g.r.IntN(12)))
	}
	return pad(b.String(), size, "#", "")
}

// words is n words of valueWords joined by spaces.
func (g *chartGen) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = valueWords[g.r.IntN(len(valueWords))]
	}
	return strings.Join(w, " ")
}

// pad brings s to exactly size bytes with one last comment line (open …
// close) of filler, or cuts it at a line: never shorter than a line needs.
func pad(s string, size int, open, close string) []byte {
	if len(s) >= size {
		return []byte(s)
	}
	room := size - len(s)
	minLine := len(open) + len(close) + 1
	if room < minLine {
		return []byte(s + strings.Repeat("\n", room))
	}
	return []byte(s + open + strings.Repeat("x", room-minLine) + close + "\n")
}

// padJSON brings a JSON document to exactly size bytes with trailing
// white space.
func padJSON(s string, size int) []byte {
	if len(s) >= size {
		return []byte(s)
	}
	return []byte(s + strings.Repeat(" ", size-len(s)-1) + "\n")
}

// split divides total into n positive parts of random weights (exactly
// total when total >= n).
func split(r *rand.Rand, total, n int) []int {
	if n <= 0 {
		return nil
	}
	w := make([]float64, n)
	sum := 0.0
	for i := range w {
		w[i] = 0.2 + r.Float64()
		sum += w[i]
	}
	out := make([]int, n)
	left := total
	for i := range out {
		out[i] = max(1, int(float64(total)*w[i]/sum))
		left -= out[i]
	}
	out[0] = max(1, out[0]+left)
	return out
}

var valueWords = strings.Fields(`enabled replicas image repository tag pullPolicy resources limits requests cpu memory
storage class size persistence service type port ingress host tls annotations labels affinity
tolerations nodeSelector podSecurityContext securityContext metrics serviceMonitor interval retention
backup schedule bucket endpoint region credentials secretName existingSecret users databases version
config logLevel timeout maxConnections cache ttl`)
