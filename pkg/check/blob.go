package check

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/layout"
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
func blobLocation(cm *model.ConfigMap) model.Location {
	if cm.Components != nil && cm.Components.BlobFile != "" {
		return model.Location{File: cm.Components.BlobFile}
	}
	return cm.Location
}

// blobName is the blob file a rebuild writes.
func blobName(pkg *model.Package, cm *model.ConfigMap) string {
	if cm.Components != nil && cm.Components.BlobFile != "" {
		return cm.Components.BlobFile
	}
	if r := layout.Of(pkg).ConfigMap(cm); r != nil && r.Blob != "" {
		return r.Blob
	}
	return ""
}

// rebuildHint says how to rebuild a package's blob reproducibly.
func rebuildHint(pkg *model.Package, cm *model.ConfigMap) string {
	h := fmt.Sprintf("rebuild it reproducibly: `builder build %s`", pkgPath(pkg))
	if b := blobName(pkg, cm); b != "" && cm.Components != nil && cm.Components.YAMLFile != "" {
		h += fmt.Sprintf(", or `cd %s && gzip -9 -n -c %s > %s`", pkgPath(pkg), cm.Components.YAMLFile, b)
	}
	return h
}

// blobBroken reports whether the components are gzip that cannot be read.
func blobBroken(c *model.Components) bool {
	return c.Gzip && c.Blob != nil && (c.Blob.Err != nil || c.Blob.HeaderErr != nil)
}

// blobYAML: gunzip(blob) equals the vendored YAML byte for byte.
func blobYAML(t *model.Tree) []report.Finding {
	var out []report.Finding
	ix := NewIndex(t)
	pick := pickers(t, ix)
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			owner := ownerOf(pkg, cm, pick)
			c := cm.Components
			if c == nil {
				out = append(out, newFinding(BlobYAML, pkg, owner, cm.Location,
					fmt.Sprintf("ConfigMap %q has no components (neither data.components nor binaryData.components): the operator has nothing to install", cm.Name),
					fmt.Sprintf("add binaryData.components from the vendored blob: `builder build %s`", pkgPath(pkg))))
				continue
			}
			if c.DecodeErr != nil || blobBroken(c) {
				continue // blob-corrupt says why
			}
			if c.YAMLFile == "" {
				if !c.Gzip {
					continue // plain YAML in the ConfigMap itself: what is reviewed is what is applied
				}
				out = append(out, newFinding(BlobYAML, pkg, owner, blobLocation(cm),
					fmt.Sprintf("the gzip components of ConfigMap %q (%s) match no vendored YAML: reviewers cannot see what the cluster gets", cm.Name, componentsKey(c)),
					fmt.Sprintf("vendor the upstream YAML under files/ and pin it, then `builder build %s`", pkgPath(pkg))))
				continue
			}
			f := pkg.Files[c.YAMLFile]
			if f == nil {
				out = append(out, newFinding(BlobYAML, pkg, owner, model.Location{File: c.YAMLFile},
					fmt.Sprintf("ConfigMap %q should equal %s, which is missing", cm.Name, c.YAMLFile),
					fmt.Sprintf("restore the vendored YAML: `builder build %s`", pkgPath(pkg))))
				continue
			}
			got, size := c.SHA256, c.Size
			if c.Gzip {
				if c.Blob == nil {
					continue // not inspected: nothing to compare
				}
				got, size = c.Blob.RawSHA256, c.Blob.RawSize
			}
			if got == f.SHA256 && c.Diff == nil {
				continue
			}
			what := "inflates to"
			if !c.Gzip {
				what = "holds"
			}
			msg := fmt.Sprintf("%s of ConfigMap %q %s something other than %s", componentsKey(c), cm.Name, what, c.YAMLFile)
			loc := model.Location{File: c.YAMLFile}
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
		}
	}
	return out
}

// blobHeader: the gzip header embeds nothing that changes between runs.
func blobHeader(t *model.Tree) []report.Finding {
	var out []report.Finding
	ix := NewIndex(t)
	pick := pickers(t, ix)
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			c := cm.Components
			if c == nil || c.DecodeErr != nil || !c.Gzip || c.Blob == nil || c.Blob.HeaderErr != nil {
				continue
			}
			probs := c.Blob.Header.Problems()
			if len(probs) == 0 {
				continue
			}
			what := blobLocation(cm).File
			if what == cm.File {
				what = componentsKey(c)
			}
			out = append(out, newFinding(BlobHeader, pkg, ownerOf(pkg, cm, pick), blobLocation(cm),
				fmt.Sprintf("gzip header of %s (ConfigMap %q) is not reproducible: it %s", what, cm.Name, strings.Join(probs, ", ")),
				"gzip without -n stores the file name and time, so the same YAML gives a different blob; "+rebuildHint(pkg, cm)))
		}
	}
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

func corruptHint(pkg *model.Package, cm *model.ConfigMap, info *blob.Info) string {
	if ce, ok := blob.IsCorrupt(info.Err); ok && ce.Kind == blob.TooLarge {
		return "if the manifest really is that large, raise the inflate limit (--max-inflate); otherwise " + rebuildHint(pkg, cm)
	}
	return rebuildHint(pkg, cm)
}

// blobCorrupt: the blob is one valid complete gzip member within the limit.
func blobCorrupt(t *model.Tree) []report.Finding {
	var out []report.Finding
	ix := NewIndex(t)
	pick := pickers(t, ix)
	for _, pkg := range t.Packages {
		seen := map[string]bool{}
		for _, cm := range pkg.ConfigMaps {
			c := cm.Components
			if c == nil || c.DecodeErr != nil || !c.Gzip || c.Blob == nil {
				continue // an undecodable one is the loader's blob-corrupt problem
			}
			if c.BlobFile != "" {
				seen[c.BlobFile] = true
			}
			if !blobBroken(c) {
				continue
			}
			out = append(out, newFinding(BlobCorrupt, pkg, ownerOf(pkg, cm, pick), blobLocation(cm),
				fmt.Sprintf("%s of ConfigMap %q %s", componentsKey(c), cm.Name, corruptMessage(c.Blob)),
				corruptHint(pkg, cm, c.Blob)))
		}
		// Vendored gzip files no ConfigMap carries are checked on their own.
		for _, name := range sortedKeys(pkg.Files) {
			f := pkg.Files[name]
			if f.Blob == nil || seen[name] || (f.Blob.Err == nil && f.Blob.HeaderErr == nil) {
				continue
			}
			out = append(out, newFinding(BlobCorrupt, pkg, "", model.Location{File: name},
				fmt.Sprintf("vendored blob %s %s", name, corruptMessage(f.Blob)),
				fmt.Sprintf("rebuild it reproducibly: `builder build %s`", pkgPath(pkg))))
		}
	}
	return out
}

// compressedAnnotation: components are gzip in binaryData exactly when the
// compressed annotation is "true" (the operator reads binaryData and gunzips
// only then, and data.components otherwise).
func compressedAnnotation(t *model.Tree) []report.Finding {
	var out []report.Finding
	ix := NewIndex(t)
	pick := pickers(t, ix)
	const ann = model.CompressedAnnotation
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			c := cm.Components
			if c == nil || c.DecodeErr != nil {
				continue
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
				hint = fmt.Sprintf("store the gzip blob in binaryData.components (`builder build %s`), or drop the annotation and keep plain YAML in data.components", pkgPath(pkg))
			case !c.Gzip && c.InBinaryData:
				msg = fmt.Sprintf("ConfigMap %q keeps plain components in binaryData without %s: \"true\": the operator reads only data.components", cm.Name, ann)
				hint = "move the YAML to data.components, or store it gzipped in binaryData with the annotation"
			default:
				continue
			}
			out = append(out, newFinding(CompressedAnnotation, pkg, ownerOf(pkg, cm, pick), cm.Location, msg, hint))
		}
	}
	return out
}
