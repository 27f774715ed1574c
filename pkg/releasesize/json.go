package releasesize

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// writeReleaseJSON writes exactly the bytes json.Marshal(rel) gives, in
// pieces: the chart's files are base64-encoded straight into w and the
// manifest escaped a chunk at a time, so the release's megabytes are never
// held as one JSON text. Every field release.Release and chart.Chart
// encode is written here, in their order, with their omitempty rules
// (helm.sh/helm/v3 pkg/release/release.go, pkg/chart/chart.go,
// pkg/chart/file.go); the small ones through json.Marshal.
// TestReleaseJSONIsMarshal compares both on charts of every shape.
func writeReleaseJSON(w io.Writer, rel *release.Release) error {
	e := &jsonWriter{w: w}
	e.raw("{")
	first := true
	field := func(name string) {
		if !first {
			e.raw(",")
		}
		first = false
		e.raw(`"` + name + `":`)
	}
	if rel.Name != "" {
		field("name")
		e.value(rel.Name)
	}
	if rel.Info != nil {
		field("info")
		e.value(rel.Info)
	}
	if rel.Chart != nil {
		field("chart")
		e.chart(rel.Chart)
	}
	if len(rel.Config) > 0 {
		field("config")
		e.value(rel.Config)
	}
	if rel.Manifest != "" {
		field("manifest")
		e.str(rel.Manifest)
	}
	if len(rel.Hooks) > 0 {
		field("hooks")
		e.value(rel.Hooks)
	}
	if rel.Version != 0 {
		field("version")
		e.value(rel.Version)
	}
	if rel.Namespace != "" {
		field("namespace")
		e.value(rel.Namespace)
	}
	e.raw("}")
	return e.err
}

// jsonWriter writes JSON pieces to w, keeping the first error.
type jsonWriter struct {
	w   io.Writer
	err error
}

func (e *jsonWriter) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

func (e *jsonWriter) value(v any) {
	if e.err != nil {
		return
	}
	js, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	_, e.err = e.w.Write(js)
}

func (e *jsonWriter) chart(c *chart.Chart) {
	e.raw(`{"metadata":`)
	e.value(c.Metadata)
	e.raw(`,"lock":`)
	e.value(c.Lock)
	e.raw(`,"templates":`)
	e.files(c.Templates)
	e.raw(`,"values":`)
	e.value(c.Values)
	e.raw(`,"schema":`)
	e.bytes(c.Schema)
	e.raw(`,"files":`)
	e.files(c.Files)
	e.raw("}")
}

func (e *jsonWriter) files(fs []*chart.File) {
	if fs == nil {
		e.raw("null")
		return
	}
	e.raw("[")
	for i, f := range fs {
		if i > 0 {
			e.raw(",")
		}
		if f == nil {
			e.raw("null")
			continue
		}
		e.raw(`{"name":`)
		e.value(f.Name)
		e.raw(`,"data":`)
		e.bytes(f.Data)
		e.raw("}")
	}
	e.raw("]")
}

// bytes writes b as encoding/json does: null when nil, else a base64
// string (standard alphabet, padded).
func (e *jsonWriter) bytes(b []byte) {
	if b == nil {
		e.raw("null")
		return
	}
	e.raw(`"`)
	if e.err == nil {
		enc := base64.NewEncoder(base64.StdEncoding, e.w)
		if _, e.err = enc.Write(b); e.err == nil {
			e.err = enc.Close()
		}
	}
	e.raw(`"`)
}

// str writes s as a JSON string, escaped as encoding/json escapes it,
// 32 KiB at a time. Chunks end before an ASCII byte, so no UTF-8 sequence
// (valid or not) is cut, and json.Marshal's escaping, which depends on
// nothing but the sequence itself, gives the same bytes piece by piece.
func (e *jsonWriter) str(s string) {
	e.raw(`"`)
	for len(s) > 0 && e.err == nil {
		n := min(len(s), 32<<10)
		for n < len(s) && s[n] >= utf8.RuneSelf {
			n++
		}
		js, err := json.Marshal(s[:n])
		if err != nil {
			e.err = err
			return
		}
		_, e.err = e.w.Write(js[1 : len(js)-1])
		s = s[n:]
	}
	e.raw(`"`)
}
