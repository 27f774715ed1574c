package load

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/pkg/model"
)

// summary renders a tree compactly, one fact per line, for tests.
func summary(t *model.Tree) string {
	var b strings.Builder
	for _, pr := range t.Problems {
		fmt.Fprintf(&b, "tree problem %s %s:%d %s\n", pr.Check, pr.File, pr.Line, pr.Message)
	}
	for _, p := range t.Packages {
		kind := "plain"
		if p.Chart {
			kind = "chart"
		}
		fmt.Fprintf(&b, "%s %s ns=%s pins=%q\n", p.Path, kind, p.Namespace, p.Pins.Source)
		for _, pr := range p.Providers {
			sel := "<nil>"
			if pr.Selector != nil {
				var kv []string
				for k, v := range pr.Selector.MatchLabels {
					kv = append(kv, k+"="+v)
				}
				sort.Strings(kv)
				sel = strings.Join(kv, ",")
			}
			fmt.Fprintf(&b, "  %s ns=%s version=%s selector=%s at %s:%d\n", pr.ID(), pr.Namespace, pr.Version, sel, pr.File, pr.Line)
		}
		for _, cm := range p.ConfigMaps {
			c := cm.Components
			yaml, by := p.Layout.ComponentsYAML(cm)
			fmt.Fprintf(&b, "  ConfigMap/%s ns=%s at %s:%d gzip=%v blob=%s yaml=%s by=%s", cm.Name, cm.Namespace, cm.File, cm.Line, c.Gzip, p.Layout.BlobFile(cm), yaml, by)
			if c.Blob != nil {
				fmt.Fprintf(&b, " err=%v reproducible=%v", c.Blob.Err, c.Blob.Header.Reproducible())
			}
			if c.Diff != nil {
				fmt.Fprintf(&b, " diff=line %d byte %d", c.Diff.Line, c.Diff.Offset)
			}
			if cm.Metadata != nil {
				fmt.Fprintf(&b, " metadata(kind=%q series=%d err=%v)", cm.Metadata.Kind, len(cm.Metadata.ReleaseSeries), cm.Metadata.Err)
			}
			b.WriteString("\n")
		}
		var files []string
		for f, mf := range p.Files {
			if mf.Blob != nil {
				f += "(gz)"
			}
			files = append(files, f)
		}
		sort.Strings(files)
		fmt.Fprintf(&b, "  files %s\n", strings.Join(files, " "))
		for _, pr := range p.Problems {
			fmt.Fprintf(&b, "  problem %s %s %s:%d %s\n", pr.Check, pr.Provider, pr.File, pr.Line, pr.Message)
		}
	}
	if t.Core != nil {
		fmt.Fprintf(&b, "core %s\n", t.Core.Path)
	}
	return b.String()
}
