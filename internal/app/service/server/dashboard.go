package server

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/report"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the dashboard's templates, parsed on first use: every process
// of the binary (`verifier check`, each render child) would otherwise parse
// them at start-up for nothing.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"when": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				return v.UTC().Format("2006-01-02 15:04:05Z")
			case *time.Time:
				if v != nil {
					return v.UTC().Format("2006-01-02 15:04:05Z")
				}
			}
			return "—"
		},
		"version": func() string { return version.Version },
	}).ParseFS(templateFiles, "templates/*.html"))
})

// findingGroup is the open findings of one package and check.
type findingGroup struct {
	Check    string
	Findings []store.Finding
}

// packageGroup is the open findings of one package of a source.
type packageGroup struct {
	Source   string
	Package  string
	Errors   int
	Warnings int
	Checks   []findingGroup
}

// groupFindings groups open findings by source and package, then by check.
// The store returns them ordered by source, package, check.
func groupFindings(fs []store.Finding) []packageGroup {
	var out []packageGroup
	for _, f := range fs {
		if n := len(out); n == 0 || out[n-1].Source != f.Source || out[n-1].Package != f.Package {
			out = append(out, packageGroup{Source: f.Source, Package: f.Package})
		}
		pg := &out[len(out)-1]
		if n := len(pg.Checks); n == 0 || pg.Checks[n-1].Check != f.Check {
			pg.Checks = append(pg.Checks, findingGroup{Check: f.Check})
		}
		cg := &pg.Checks[len(pg.Checks)-1]
		cg.Findings = append(cg.Findings, f)
		switch {
		case f.Waiver != nil:
		case f.Severity == report.Error:
			pg.Errors++
		case f.Severity == report.Warning:
			pg.Warnings++
		}
	}
	// Packages with errors first, then by name.
	sort.SliceStable(out, func(i, j int) bool { return (out[i].Errors > 0) && (out[j].Errors == 0) })
	return out
}

// pageCSP allows the pages' inline styles and nothing else: no script runs,
// whatever a finding's message holds, and the pages need none.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, name string, data any) {
	var buf bytes.Buffer
	if err := pages().ExecuteTemplate(&buf, name, data); err != nil {
		s.log.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(s.paths.scrub(buf.Bytes(), false)) // as the API: no server path
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) {
	infos, err := s.sourceInfos(r.Context())
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	open, err := s.store.OpenFindings(r.Context(), "", "")
	s.linkFindings(open)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	recent, err := s.store.Scans(r.Context(), "", 10)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	charts, err := s.sourceCharts(r.Context(), infos)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.renderPage(w, r, "dashboard.html", map[string]any{
		"Charts":   charts,
		"Sources":  infos,
		"Open":     len(open),
		"Packages": groupFindings(open),
		"Recent":   recent,
	})
}

func (s *Server) scanPage(w http.ResponseWriter, r *http.Request) {
	d, status, err := s.loadScan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(err.Error() + "\n"))
		return
	}
	s.renderPage(w, r, "scan.html", d)
}
