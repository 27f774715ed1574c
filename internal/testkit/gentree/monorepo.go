package gentree

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
)

// otherStems name the charts that are not provider packages, after
// Cozystack's packages/.
var otherStems = []string{
	"kubernetes", "tenant", "monitoring", "postgres", "redis", "kafka", "clickhouse", "nats",
	"external-dns", "seaweedfs", "keycloak", "cert-manager", "dashboard", "ingress", "cilium",
	"kubeovn", "linstor", "metallb", "velero", "vertical-pod-autoscaler", "bucket", "vm-disk",
	"vm-instance", "virtual-machine", "nginx", "mysql", "rabbitmq", "ferretdb", "grafana-operator",
	"victoria-metrics", "fluent-bit", "etcd", "kamaji", "kubevirt", "cdi", "snapshot-controller",
	"coredns", "reloader", "piraeus", "objectstorage", "opencost", "goldpinger", "mariadb-operator",
}

var otherGroups = []string{"apps", "apps", "extra", "system", "system", "apps", "system", "library"}

// writeOthers writes opts.Others charts that are not provider packages
// under root/packages and returns how many it wrote.
func writeOthers(root string, opts Options) (int, error) {
	for j := range opts.Others {
		name := otherStems[j%len(otherStems)]
		if k := j / len(otherStems); k > 0 {
			name = fmt.Sprintf("%s-%d", name, k+1)
		}
		dir := filepath.Join(root, "packages", otherGroups[j%len(otherGroups)], name)
		r := rand.New(rand.NewPCG(opts.Seed, uint64(j)+1<<32))
		for _, f := range otherChart(r, j, name, opts.Seed) {
			if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.name)), f.data); err != nil {
				return j, fmt.Errorf("chart %s: %w", name, err)
			}
		}
	}
	return opts.Others, nil
}

// otherChart is the j-th chart that is not a provider package: an
// application chart (Deployment, Service, ConfigMap, helpers, values);
// one in six reads values the platform injects (.Values._cluster) and one
// in eight fails a `required` with default values; half the system
// charts vendor an upstream subchart (two dozen templates) with CRDs;
// one in ten ships Grafana dashboards.
func otherChart(r *rand.Rand, j int, name string, seed uint64) []file {
	files := []file{
		{"Chart.yaml", fmt.Appendf(nil, "apiVersion: v2\nname: %s\ndescription: Managed %s service\nicon: /logos/%s.svg\ntype: application\nversion: 0.%d.0\nappVersion: \"%d.%d\"\n", name, name, name, j%9+1, j%4+1, j%13)},
		{"values.yaml", values(r, 40+r.IntN(160))},
		{"Makefile", fmt.Appendf(nil, "export NAME=%s\nexport NAMESPACE=cozy-%s\n\ninclude ../../../scripts/package.mk\n\nupdate:\n\trm -rf charts\n\thelm pull oci://example.com/charts/%s --untar --untardir charts\n", name, name, name)},
		{"templates/_helpers.tpl", helpers(name)},
		{"templates/deployment.yaml", deployment(name)},
		{"templates/service.yaml", fmt.Appendf(nil, "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include %q . }}\n  labels:\n    {{- include %q . | nindent 4 }}\nspec:\n  type: {{ .Values.service.type | default \"ClusterIP\" }}\n  ports:\n  - port: {{ .Values.service.port | default 80 }}\n    targetPort: http\n  selector:\n    {{- include %q . | nindent 4 }}\n", name+".fullname", name+".labels", name+".selectorLabels")},
		{"templates/configmap.yaml", fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include %q . }}-config\ndata:\n  config.yaml: |\n    {{- toYaml .Values.config | nindent 4 }}\n", name+".fullname")},
	}
	switch {
	case j%6 == 0:
		files = append(files, file{"templates/cluster.yaml", fmt.Appendf(nil, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-cluster\nstringData:\n  domain: {{ index .Values._cluster \"cluster-domain\" }}\n  issuer: {{ .Values._cluster.issuer.name }}\n", name)})
	case j%8 == 3:
		files = append(files, file{"templates/provider.yaml", fmt.Appendf(nil, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-provider\nstringData:\n  provider: {{ required \"a DNS/storage provider is required: set .Values.provider\" .Values.provider }}\n", name)})
	}
	if otherGroups[j%len(otherGroups)] == "system" && (j/len(otherGroups))%2 == 0 {
		up := "charts/" + name + "/"
		files = append(files,
			file{up + "Chart.yaml", fmt.Appendf(nil, "apiVersion: v2\nname: %s\nversion: 1.%d.%d\nappVersion: v1.%d.%d\nkubeVersion: \">=1.26.0-0\"\n", name, j%17, j%5, j%17, j%5)},
			file{up + "values.yaml", values(r, 1200+r.IntN(1200))},
			file{up + "templates/_helpers.tpl", helpers(name)},
			file{up + "crds/crds.yaml", generatedManifest(int64(seed)+int64(j), 100<<10+r.IntN(200<<10))},
		)
		for k := range 20 + r.IntN(10) {
			files = append(files, file{fmt.Sprintf("%stemplates/component-%02d.yaml", up, k), upstreamTemplate(r, name, k)})
		}
	}
	if j%10 == 5 {
		for k := range 3 {
			files = append(files, file{fmt.Sprintf("files/dashboards/%s-%d.json", name, k), dashboard(r, 20<<10+r.IntN(60<<10))})
		}
	}
	if j%3 == 0 {
		files = append(files, file{"images/" + name + "/Dockerfile", fmt.Appendf(nil, "FROM alpine:3.20\nARG VERSION=v%d.%d.%d\nRUN apk add --no-cache curl && curl -sSL https://example.com/%s-$VERSION.tar.gz | tar xz -C /usr/local/bin\n", j%3+1, j%11, j%7, name)})
	}
	return files
}

var valueWords = strings.Fields(`enabled replicas image repository tag pullPolicy resources limits requests cpu memory
storage class size persistence service type port ingress host tls annotations labels affinity
tolerations nodeSelector podSecurityContext securityContext metrics serviceMonitor interval retention
backup schedule bucket endpoint region credentials secretName existingSecret users databases version
config logLevel timeout maxConnections cache ttl`)

// values is a values.yaml of n lines: nested keys, comments, scalars.
func values(r *rand.Rand, n int) []byte {
	var b strings.Builder
	b.WriteString("config: {}\nservice:\n  type: ClusterIP\n  port: 80\n")
	depth := 0
	for range n {
		pad := strings.Repeat("  ", depth)
		w := valueWords[r.IntN(len(valueWords))]
		switch r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "%s# -- %s of the %s, %s when unset\n", pad, w, valueWords[r.IntN(len(valueWords))], valueWords[r.IntN(len(valueWords))])
		case 1:
			if depth < 4 {
				fmt.Fprintf(&b, "%s%s%d:\n", pad, w, r.IntN(100))
				depth++
				continue
			}
			fallthrough
		case 2:
			if depth > 0 {
				depth--
			}
			fmt.Fprintf(&b, "%s%s%d: %d\n", pad, w, r.IntN(100), r.IntN(5000))
		default:
			fmt.Fprintf(&b, "%s%s%d: %q\n", pad, w, r.IntN(100), valueWords[r.IntN(len(valueWords))]+"-"+valueWords[r.IntN(len(valueWords))])
		}
	}
	return []byte(b.String())
}

func helpers(name string) []byte {
	return fmt.Appendf(nil, `{{/*
Expand the name of the chart.
*/}}
{{- define "%[1]s.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
*/}}
{{- define "%[1]s.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%%s-%%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "%[1]s.labels" -}}
helm.sh/chart: {{ printf "%%s-%%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "%[1]s.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "%[1]s.selectorLabels" -}}
app.kubernetes.io/name: {{ include "%[1]s.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
`, name)
}

func deployment(name string) []byte {
	return fmt.Appendf(nil, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "%[1]s.fullname" . }}
  labels:
    {{- include "%[1]s.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas | default 1 }}
  selector:
    matchLabels:
      {{- include "%[1]s.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      annotations:
        checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
      labels:
        {{- include "%[1]s.selectorLabels" . | nindent 8 }}
    spec:
      containers:
      - name: %[1]s
        image: "{{ .Values.image.repository | default "example.com/%[1]s" }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
        ports:
        - name: http
          containerPort: 8080
        resources:
          {{- toYaml .Values.resources | nindent 10 }}
`, name)
}

// upstreamTemplate is one template of a vendored upstream subchart.
func upstreamTemplate(r *rand.Rand, name string, k int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "{{- if .Values.component%02d.enabled }}\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: {{ include %q . }}-component-%02d\n  namespace: {{ .Release.Namespace }}\nspec:\n  template:\n    spec:\n      containers:\n", k, name+".fullname", k)
	for c := range 2 + r.IntN(4) {
		fmt.Fprintf(&b, "      - name: c%d\n        image: {{ .Values.component%02d.image | quote }}\n        args:\n", c, k)
		for range 4 + r.IntN(20) {
			w := valueWords[r.IntN(len(valueWords))]
			fmt.Fprintf(&b, "        - --%s-%s={{ .Values.component%02d.%s | default %d }}\n", w, valueWords[r.IntN(len(valueWords))], k, w, r.IntN(1000))
		}
	}
	b.WriteString("{{- end }}\n")
	return []byte(b.String())
}

// dashboard is a Grafana dashboard of about size bytes.
func dashboard(r *rand.Rand, size int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"title\": \"Overview\",\n  \"panels\": [\n")
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		w := valueWords[r.IntN(len(valueWords))]
		fmt.Fprintf(&b, "    {\"id\": %d, \"type\": \"timeseries\", \"title\": \"%s %s\", \"gridPos\": {\"h\": 8, \"w\": 12, \"x\": %d, \"y\": %d},\n     \"targets\": [{\"expr\": \"sum(rate(%s_%s_total{namespace=~\\\"$namespace\\\"}[%dm])) by (%s)\", \"legendFormat\": \"{{%s}}\"}]}",
			i, w, valueWords[r.IntN(len(valueWords))], (i%2)*12, i*8, w, valueWords[r.IntN(len(valueWords))], 1+r.IntN(10), valueWords[r.IntN(len(valueWords))], w)
	}
	b.WriteString("\n  ]\n}\n")
	return []byte(b.String())
}
