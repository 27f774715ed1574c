package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// componentsKey names where a ConfigMap keeps its components.
func componentsKey(c *model.Components) string {
	if c.InBinaryData {
		return "binaryData.components"
	}
	return "data.components"
}

// blobLocation is where a blob finding points: the vendored blob file when
// the ConfigMap carries exactly its bytes, else the ConfigMap.
func blobLocation(pkg *model.Package, cm *model.ConfigMap) model.Location {
	if b := pkg.Layout.BlobFile(cm); b != "" {
		return model.Location{File: b}
	}
	if cm.ComponentsLine > 0 {
		// The blob is written into the template itself: its own line.
		return model.Location{File: cm.File, Line: cm.ComponentsLine}
	}
	return cm.Location
}

// blobName is the blob file a rebuild writes.
func blobName(pkg *model.Package, cm *model.ConfigMap) string {
	if b := pkg.Layout.BlobFile(cm); b != "" {
		return b
	}
	if r := pkg.Layout.ConfigMap(cm); r != nil && r.Blob != "" {
		return r.Blob
	}
	return ""
}

// rebuildHint says how to rebuild a package's blob reproducibly: with the
// builder when the package pins its sources or vendors both the blob and
// its YAML (builder build then rebuilds the blob from that YAML), or with
// gzip from the vendored YAML; for a blob inlined in a template with no
// YAML beside it (air-gap charts), from the YAML it was made from.
func rebuildHint(pkg *model.Package, cm *model.ConfigMap) string {
	yaml, _ := pkg.Layout.ComponentsYAML(cm)
	b := blobName(pkg, cm)
	pinned := pkg.Pins != nil && pkg.Pins.File != nil
	switch {
	case pinned && b != "" && yaml != "":
		return fmt.Sprintf("rebuild it reproducibly: `builder build %s`, or `cd %s && gzip -9 -n -c %s > %s`", pkg.CommandPath(), pkg.CommandPath(), yaml, b)
	case pinned:
		return fmt.Sprintf("rebuild it reproducibly: `builder build %s`", pkg.CommandPath())
	case b != "" && yaml != "":
		// A package that pins no download: builder build rebuilds the
		// blob from the vendored YAML the package layout pairs it with.
		return fmt.Sprintf("rebuild it reproducibly from the vendored YAML: `builder build %s` (it fetches nothing), or `cd %s && gzip -9 -n -c %s > %s`", pkg.CommandPath(), pkg.CommandPath(), yaml, b)
	case b != "":
		return fmt.Sprintf("rebuild it reproducibly from the upstream YAML it was made from: `gzip -9 -n -c <components>.yaml > %s`", rel(pkg, b))
	default:
		return fmt.Sprintf("rebuild it reproducibly from the upstream YAML it was made from (`gzip -9 -n -c <components>.yaml | base64 -w0`) and put that in binaryData.components of ConfigMap %q in %s", cm.Name, rel(pkg, cm.File))
	}
}

// gzipInspected reports whether the components are a gzip blob that
// decoded and was inspected (c.Blob is set).
func gzipInspected(c *model.Components) bool {
	return c != nil && c.DecodeErr == nil && c.Gzip && c.Blob != nil
}

// blobBroken reports whether the components are gzip that cannot be read.
func blobBroken(c *model.Components) bool {
	return c.Gzip && c.Blob != nil && (c.Blob.Err != nil || c.Blob.HeaderErr != nil)
}

// blobYAML: gunzip(blob) equals the vendored YAML byte for byte.
func blobYAML(in *Input) []report.Finding {
	var out []report.Finding
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		c := cm.Components
		if c == nil {
			out = append(out, newFinding(BlobYAML, pkg, owner, cm.Location,
				fmt.Sprintf("ConfigMap %q has no components (neither data.components nor binaryData.components): the operator has nothing to install", cm.Name),
				fmt.Sprintf("add binaryData.components from the vendored blob: `builder build %s`", pkg.CommandPath())))
			return
		}
		if c.DecodeErr != nil || blobBroken(c) {
			return // blob-corrupt says why
		}
		yaml, _ := pkg.Layout.ComponentsYAML(cm)
		if yaml == "" {
			if !c.Gzip {
				return // plain YAML in the ConfigMap itself: what is reviewed is what is applied
			}
			// Nothing to compare with (an air-gap chart inlines the
			// blob): not a drift, but nobody can review it.
			f := newFinding(BlobYAML, pkg, owner, blobLocation(pkg, cm),
				fmt.Sprintf("the gzip components of ConfigMap %q in %s (%s) have no vendored YAML beside them: nobody can review what the cluster gets", cm.Name, nsName(cm.Namespace), componentsKey(c)),
				"keep the raw YAML the blob was made from in the repository next to the chart (and pin its upstream URL and sha256), so a reviewer can diff it; `gunzip -c` of the blob shows what the cluster gets today")
			f.Severity = report.Warning // at most a warning: nothing differs that can be shown
			out = append(out, f)
			return
		}
		f := pkg.Files[yaml]
		if f == nil {
			out = append(out, newFinding(BlobYAML, pkg, owner, model.Location{File: yaml},
				fmt.Sprintf("ConfigMap %q should equal %s, which is missing", cm.Name, yaml),
				fmt.Sprintf("restore the vendored YAML: `builder build %s`", pkg.CommandPath())))
			return
		}
		got, size := c.SHA256, c.Size
		if c.Gzip {
			if c.Blob == nil {
				return // not inspected: nothing to compare
			}
			got, size = c.Blob.RawSHA256, c.Blob.RawSize
		}
		if got == f.SHA256 && c.Diff == nil {
			return
		}
		what := "inflates to"
		if !c.Gzip {
			what = "holds"
		}
		msg := fmt.Sprintf("%s of ConfigMap %q %s something other than %s", componentsKey(c), cm.Name, what, yaml)
		loc := model.Location{File: yaml}
		var detail string
		if d := c.Diff; d != nil {
			msg += fmt.Sprintf(": first difference at line %d (byte %d)", d.Line, d.Offset)
			loc.Line = d.Line
			detail = d.Excerpt
		} else {
			msg += fmt.Sprintf(" (%d bytes, sha256 %s; the YAML has %d bytes, sha256 %s)", size, shortHex(got.Hex()), f.Size, shortHex(f.SHA256.Hex()))
		}
		fd := newFinding(BlobYAML, pkg, owner, loc, msg,
			"the cluster gets the blob, reviewers see the YAML; if the YAML is right, "+rebuildHint(pkg, cm)+
				"; if the blob is right, restore the YAML from its pin")
		fd.Detail = detail
		out = append(out, fd)
	})
	return out
}

// blobHeader: the gzip header embeds nothing that changes between runs.
func blobHeader(in *Input) []report.Finding {
	var out []report.Finding
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		c := cm.Components
		if !gzipInspected(c) || c.Blob.HeaderErr != nil {
			return
		}
		probs := c.Blob.Header.Problems()
		if len(probs) == 0 {
			return
		}
		what := blobLocation(pkg, cm).File
		if what == cm.File {
			what = componentsKey(c)
		}
		out = append(out, newFinding(BlobHeader, pkg, owner, blobLocation(pkg, cm),
			fmt.Sprintf("gzip header of %s (ConfigMap %q) is not reproducible: it %s", what, cm.Name, strings.Join(probs, ", ")),
			"gzip without -n stores the file name and time, so the same YAML gives a different blob; "+rebuildHint(pkg, cm)))
	})
	return out
}

// corruptMessage words a blob.Info error.
func corruptMessage(info *blob.Info) string {
	err := info.Err
	if info.HeaderErr != nil {
		err = info.HeaderErr
	}
	ce, ok := blob.IsCorrupt(err)
	if !ok {
		return err.Error()
	}
	var s string
	switch ce.Kind {
	case blob.NotGzip:
		s = "is not gzip"
	case blob.BadHeader:
		s = "has an invalid gzip header"
	case blob.Truncated:
		s = "is truncated: the stream ends before the gzip trailer"
	case blob.BadData:
		s = "has an invalid deflate stream"
	case blob.BadChecksum:
		s = "fails its CRC-32/size trailer check"
	case blob.MultiMember:
		s = fmt.Sprintf("holds %d gzip members, not one", max(info.Members, 2))
	case blob.Trailing:
		s = "has data after the gzip trailer"
	case blob.TooLarge:
		s = fmt.Sprintf("inflates past the size limit; stopped after %d bytes (a gzip bomb?)", info.RawSize)
		if info.RawSize <= 0 {
			s = "inflates past the size limit (a gzip bomb?)"
		}
	default:
		s = "is corrupt"
	}
	if ce.Offset >= 0 {
		s += fmt.Sprintf(" (at compressed byte %d)", ce.Offset)
	}
	if ce.Detail != "" && ce.Kind != blob.TooLarge { // the sentence above says it all
		s += ": " + ce.Detail
	}
	return s
}

func corruptHint(pkg *model.Package, cm *model.ConfigMap, info *blob.Info) (string, []report.Setting) {
	if ce, ok := blob.IsCorrupt(info.Err); ok && ce.Kind == blob.TooLarge {
		return rebuildHint(pkg, cm) + "; if the manifest really is that large, raise the inflate limit", []report.Setting{report.SettingInflateLimit}
	}
	return rebuildHint(pkg, cm), nil
}

// blobCorrupt: the blob is one valid complete gzip member within the limit.
func blobCorrupt(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	carried := map[*model.Package]map[string]bool{} // blob files a ConfigMap carries
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		c := cm.Components
		if !gzipInspected(c) {
			return // an undecodable one is the loader's blob-corrupt problem
		}
		if b := pkg.Layout.BlobFile(cm); b != "" {
			if carried[pkg] == nil {
				carried[pkg] = map[string]bool{}
			}
			carried[pkg][b] = true
		}
		if !blobBroken(c) {
			return
		}
		hint, settings := corruptHint(pkg, cm, c.Blob)
		f := newFinding(model.CheckBlobCorrupt, pkg, owner, blobLocation(pkg, cm),
			fmt.Sprintf("%s of ConfigMap %q %s", componentsKey(c), cm.Name, corruptMessage(c.Blob)), hint)
		f.Settings = settings
		out = append(out, f)
	})
	// Vendored gzip files no ConfigMap carries are checked on their own.
	for _, pkg := range t.Packages {
		for _, name := range slices.Sorted(maps.Keys(pkg.Files)) {
			f := pkg.Files[name]
			if f.Blob == nil || carried[pkg][name] || (f.Blob.Err == nil && f.Blob.HeaderErr == nil) {
				continue
			}
			out = append(out, newFinding(model.CheckBlobCorrupt, pkg, "", model.Location{File: name},
				fmt.Sprintf("vendored blob %s %s", name, corruptMessage(f.Blob)),
				fmt.Sprintf("rebuild it reproducibly: `builder build %s`", pkg.CommandPath())))
		}
	}
	return out
}

// compressedAnnotation: components are gzip in binaryData exactly when the
// compressed annotation is "true" (the operator reads binaryData and gunzips
// only then, and data.components otherwise).
func compressedAnnotation(in *Input) []report.Finding {
	var out []report.Finding
	const ann = model.CompressedAnnotation
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		c := cm.Components
		if c == nil || c.DecodeErr != nil {
			return
		}
		val, has := cm.Annotations[ann]
		annotated := val == "true"
		var msg, hint string
		switch {
		case c.Gzip && !c.InBinaryData:
			msg = fmt.Sprintf("ConfigMap %q keeps gzip bytes in data.components: the operator applies them as YAML", cm.Name)
			hint = fmt.Sprintf("move them to binaryData.components and annotate %s: \"true\"", ann)
		case c.Gzip && !annotated:
			state := "missing"
			if has {
				state = fmt.Sprintf("%q", val)
			}
			msg = fmt.Sprintf("ConfigMap %q has gzip bytes in binaryData.components but annotation %s is %s: the operator ignores binaryData and finds no components", cm.Name, ann, state)
			hint = fmt.Sprintf("add the annotation %s: \"true\" to the ConfigMap", ann)
		case !c.Gzip && annotated:
			msg = fmt.Sprintf("ConfigMap %q is annotated %s: \"true\" but %s is not gzip: the operator fails to decompress it", cm.Name, ann, componentsKey(c))
			hint = "store the gzip blob in binaryData.components, or drop the annotation and keep plain YAML in data.components"
			if pkg.Pins != nil && pkg.Pins.File != nil {
				hint = fmt.Sprintf("store the gzip blob in binaryData.components (`builder build %s`), or drop the annotation and keep plain YAML in data.components", pkg.CommandPath())
			}
		case !c.Gzip && c.InBinaryData:
			msg = fmt.Sprintf("ConfigMap %q keeps plain components in binaryData without %s: \"true\": the operator reads only data.components", cm.Name, ann)
			hint = "move the YAML to data.components, or store it gzipped in binaryData with the annotation"
		default:
			return
		}
		out = append(out, newFinding(CompressedAnnotation, pkg, owner, cm.Location, msg, hint))
	})
	return out
}

// componentsValid: the (inflated) components are a stream of Kubernetes
// objects with apiVersion, kind and metadata.name, at least one.
func componentsValid(in *Input) []report.Finding {
	var out []report.Finding
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		c := cm.Components
		if c == nil || c.DecodeErr != nil || blobBroken(c) || c.Objects == nil || c.Objects.Problem == "" {
			return
		}
		what := componentsKey(c)
		if c.Gzip {
			what += " (inflated)"
		}
		loc := cm.Location
		yaml, _ := pkg.Layout.ComponentsYAML(cm)
		if yaml != "" && pkg.Files[yaml] != nil {
			loc = model.Location{File: yaml}
		}
		hint := "the upstream download went wrong (an error page or a cut-off file was saved): fetch it again with `curl -fsSL` (fail on HTTP errors) and check its SHA-256"
		if yaml != "" {
			hint += fmt.Sprintf(", then `builder build %s`", pkg.CommandPath())
		}
		out = append(out, newFinding(ComponentsValid, pkg, owner, loc,
			fmt.Sprintf("%s of ConfigMap %q is not a stream of Kubernetes objects: %s; the operator would install nothing or fail", what, cm.Name, c.Objects.Problem),
			hint))
	})
	return out
}

// releaseSize: the chart's Helm release fits the 1 MiB of a Secret.
func releaseSize(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	for _, pkg := range t.Packages {
		out = append(out, objectSize(pkg)...)
	}
	for _, pkg := range t.Packages {
		r := pkg.Release
		if r == nil || float64(r.Bytes) < model.ReleaseWarn*model.ReleaseLimit {
			continue
		}
		pct := float64(r.Bytes) * 100 / model.ReleaseLimit
		inChart := map[string]bool{}
		for _, f := range r.Files {
			inChart[f.Path] = true
		}
		var heavy []string
		for _, f := range r.Files[:min(3, len(r.Files))] {
			heavy = append(heavy, fmt.Sprintf("%s %s", f.Path, kib(f.Bytes)))
		}
		size := kib(r.Bytes)
		if !r.Exact {
			size = "at most " + size // an upper bound, on one side of both lines
		}
		msg := fmt.Sprintf("the Helm release of this chart encodes to %s, %.0f %% of the 1 MiB a release Secret holds", size, pct)
		if pct > 100 {
			msg += ": Helm cannot install or upgrade it"
		} else {
			msg += ": a bigger upstream manifest will not install"
		}
		if len(heavy) > 0 {
			msg += "; heaviest files (as stored, base64): " + strings.Join(heavy, ", ")
		}
		var dup []string
		seen := map[string]bool{}
		for _, cm := range pkg.ConfigMaps {
			c := cm.Components
			yaml, _ := pkg.Layout.ComponentsYAML(cm)
			b := pkg.Layout.BlobFile(cm)
			if c == nil || !c.Gzip || yaml == "" || b == "" || !inChart[yaml] || seen[yaml] {
				continue
			}
			seen[yaml] = true
			dup = append(dup, fmt.Sprintf("%s (the raw YAML of %s)", yaml, b))
		}
		hint := "keep only what the templates read in the chart: list other files in .helmignore"
		if len(dup) > 0 {
			msg += "; " + strings.Join(dup, ", ") + " ships beside its blob, so the chart carries the manifest twice"
			hint = "add the raw YAML to .helmignore (e.g. the line " + strings.SplitN(dup[0], " ", 2)[0] + "; .helmignore takes globs, not regular expressions: files/.*-components.yaml matches only names that start with a dot, files/*-components.yaml is the glob): the ConfigMap reads only the blob"
		}
		f := newFinding(ReleaseSize, pkg, "", model.Location{File: "Chart.yaml"}, msg, hint)
		if pct <= 100 {
			f.Severity = report.Warning // at most a warning until it no longer fits
		}
		out = append(out, f)
	}
	return out
}

// objectSize: every components ConfigMap of a package, plain, rendered or
// in a release, holds at most the 1 MiB the API server takes in one
// ConfigMap; over it, `kubectl create` and Helm are refused.
func objectSize(pkg *model.Package) []report.Finding {
	var out []report.Finding
	for _, cm := range pkg.ConfigMaps {
		if cm.DataBytes <= model.ObjectLimit {
			continue
		}
		f := newFinding(ReleaseSize, pkg, "", cm.Location,
			fmt.Sprintf("ConfigMap %s holds %d bytes of data (%s), over the %d-byte (1 MiB) limit of a Kubernetes object: the API server refuses it", cm.Name, cm.DataBytes, kib(cm.DataBytes), model.ObjectLimit),
			"compress the components (`builder build`: gzip -9 -n into binaryData.components with the compressed annotation) or split the release")
		out = append(out, f)
	}
	return out
}

// kib renders a byte count.
func kib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/1024)
}
