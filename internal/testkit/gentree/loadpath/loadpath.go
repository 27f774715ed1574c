// Package loadpath says how the verifier's loader takes each chart of a
// tree: settled from its templates, rendered in process or in a render
// child, failing or empty with default values (gentree's monorepo is held
// to the measured tree's answers).
package loadpath

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/render"
)

// Charts loads each chart directory (relative to root) with the
// verifier's loader, as `verifier check` does with its default options, and
// says how it was taken. The program must serve as the render child
// (render.MaybeRunChild in main, rendertest.Main in tests).
func Charts(ctx context.Context, root string, charts []string) (map[string]gentree.ChartPath, error) {
	sb := render.New(nil)
	defer sb.Close()
	out := map[string]gentree.ChartPath{}
	for _, c := range charts {
		rec := &childLog{}
		tree, err := load.Tree(ctx, filepath.Join(root, filepath.FromSlash(c)), load.Options{Sandbox: sb, Logger: slog.New(rec)})
		if err != nil {
			return nil, fmt.Errorf("classify %s: %w", c, err)
		}
		p := gentree.ChartPath{}
		p.Child, p.Why = rec.child()
		switch {
		case len(tree.Packages) > 0:
			p.Took = gentree.TookProvider
		case len(tree.Skipped) == 0:
			return nil, fmt.Errorf("classify %s: neither a package nor skipped", c)
		default:
			r := tree.Skipped[0].Reason
			switch {
			case strings.HasPrefix(r, "no template holds"):
				p.Took = gentree.TookSettled
			case strings.HasPrefix(r, "renders no "):
				p.Took = gentree.TookRendered
			case strings.HasPrefix(r, "renders nothing"):
				p.Took = gentree.TookEmpty
			case strings.HasPrefix(r, "does not render"):
				p.Took = gentree.TookFailing
				p.Failure = failureKind(r)
			default:
				return nil, fmt.Errorf("classify %s: skip reason %q not understood", c, r)
			}
		}
		out[c] = p
	}
	return out, nil
}

// failureKind names how a chart fails with its default values, from
// Helm's error: a missing map indexed ("index"), a missing map's field
// ("nil"), a `required` value ("required") or a `fail` ("fail").
func failureKind(reason string) string {
	switch {
	case strings.Contains(reason, "at <index "):
		return "index"
	case strings.Contains(reason, "nil pointer"):
		return "nil"
	case strings.Contains(reason, " is required"):
		return "required"
	default:
		return "fail"
	}
}

// childLog records the loader's "chart renders in a child" debug lines.
type childLog struct {
	mu  sync.Mutex
	why []string
}

func (h *childLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *childLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *childLog) WithGroup(string) slog.Handler            { return h }

func (h *childLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "chart renders in a child" {
		return nil
	}
	why := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "why" {
			why = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.why = append(h.why, why)
	h.mu.Unlock()
	return nil
}

func (h *childLog) child() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.why) == 0 {
		return false, ""
	}
	return true, h.why[0]
}

// Secrets counts what a chart's render with default values spent on
// cryptography, by what it printed: distinct certificates (each made with
// a key of its own: genCA, genSelfSignedCert, genSignedCert) and bcrypt
// hashes (htpasswd, bcrypt), found as they are or base64-encoded. It
// renders with Helm's engine in this process, as release chart name: for
// trees one trusts (measuring). A chart that does not render counts none.
func Secrets(dir string) (certs, hashes int, err error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return 0, 0, err
	}
	opts := chartutil.ReleaseOptions{Name: chrt.Name(), Namespace: "default", IsInstall: true}
	vals, err := chartutil.ToRenderValues(chrt, map[string]any{}, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return 0, 0, nil
	}
	out, err := engine.Render(chrt, vals)
	if err != nil {
		return 0, 0, nil
	}
	seen := map[string]bool{}
	count := func(text string) {
		for _, c := range pemCert.FindAllString(text, -1) {
			seen[c] = true
		}
		hashes += len(bcryptHash.FindAllStringIndex(text, -1))
	}
	for _, text := range out {
		count(text)
		for _, tok := range base64Token.FindAllString(text, -1) {
			if b, err := base64.StdEncoding.DecodeString(tok); err == nil {
				count(string(b))
			}
		}
	}
	return len(seen), hashes, nil
}

var (
	pemCert     = regexp.MustCompile(`-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----`)
	bcryptHash  = regexp.MustCompile(`\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}`)
	base64Token = regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`)
)
