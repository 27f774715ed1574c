package load

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

const (
	corePkg  = "packages/system/capi-providers-core"
	bootPkg  = "packages/system/capi-providers-bootstrap"
	cpPkg    = "packages/system/capi-providers-cpprovider"
	infraPkg = "packages/system/capi-providers-infraprovider"
	ipamPkg  = "packages/extra/capi-ipam-in-cluster"
)

func read(t *testing.T, root, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, root, rel string, b []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func replace(t *testing.T, root, rel, old, new string) {
	t.Helper()
	b := read(t, root, rel)
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	write(t, root, rel, bytes.Replace(b, []byte(old), []byte(new), 1))
}

func cmNamed(t *testing.T, p *model.Package, name string) *model.ConfigMap {
	t.Helper()
	for _, cm := range p.ConfigMaps {
		if cm.Name == name {
			return cm
		}
	}
	t.Fatalf("%s: no ConfigMap %s", p.Path, name)
	return nil
}

// problem returns the first problem of p with check whose message contains sub.
func problem(p *model.Package, check, sub string) *model.Problem {
	for i, pr := range p.Problems {
		if pr.Check == check && strings.Contains(pr.Message, sub) {
			return &p.Problems[i]
		}
	}
	return nil
}

// otherPackagesFine asserts the scan went on: every other package loaded.
func otherPackagesFine(t *testing.T, tr *model.Tree, except string) {
	t.Helper()
	if len(tr.Packages) != 5 {
		t.Errorf("packages = %d, want 5; tree:\n%s", len(tr.Packages), summary(tr))
	}
	for _, p := range tr.Packages {
		if p.Path != except && len(p.Problems) > 0 {
			t.Errorf("%s: unexpected problems %+v", p.Path, p.Problems)
		}
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := blob.CompressBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBlobCorruption replaces a chart's blob; the ConfigMap (which Helm
// fills from the blob) and the vendored file both say what is wrong.
func TestBlobCorruption(t *testing.T) {
	yml := fixture.Components(fixture.CleanPackages()[0].Providers[0])
	good := gz(t, yml)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-8] ^= 0x01
	for _, tc := range []struct {
		name string
		blob []byte
		kind blob.Kind
		diff bool // inflated content known and equal? (no diff expected)
	}{
		{"truncated", good[:len(good)/2], blob.Truncated, false},
		{"trailer cut", good[:len(good)-4], blob.Truncated, false},
		{"corrupt deflate", flipped, "", false},
		{"bad crc", badCRC, blob.BadChecksum, false},
		{"multi-member", append(append([]byte(nil), good...), good...), blob.MultiMember, false},
		{"trailing garbage", append(append([]byte(nil), good...), "junk"...), blob.Trailing, false},
		{"header only", good[:10], blob.Truncated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			write(t, root, corePkg+"/files/components.gz", tc.blob)
			tr := loadTree(t, root, Options{})
			otherPackagesFine(t, tr, corePkg)
			p := find(t, tr, corePkg)
			cm := cmNamed(t, p, "v1.10.1-core")
			c := cm.Components
			if c.Blob == nil || c.Blob.Err == nil {
				t.Fatalf("components blob: %+v, want an error", c.Blob)
			}
			ce, ok := blob.IsCorrupt(c.Blob.Err)
			if !ok || (tc.kind != "" && ce.Kind != tc.kind) {
				t.Errorf("err = %v, want kind %s", c.Blob.Err, tc.kind)
			}
			if b := p.Layout.BlobFile(cm); b != "files/components.gz" {
				t.Errorf("blob file = %q", b)
			}
			f := p.Files["files/components.gz"]
			if f == nil || f.Blob == nil || f.Blob.Err == nil {
				t.Errorf("vendored blob not inspected as corrupt: %+v", f)
			}
			// Matched by pin even though the content is unknown.
			if yaml, by := p.Layout.ComponentsYAML(cm); yaml != "files/core-components.yaml" || by != model.MatchedByPin {
				t.Errorf("match = %q by %q", yaml, by)
			}
			// Content intact (multi-member, trailing, bad crc): no diff.
			if (tc.kind == blob.MultiMember || tc.kind == blob.Trailing || tc.kind == blob.BadChecksum) && c.Diff != nil {
				t.Errorf("diff for intact first member: %+v", c.Diff)
			}
		})
	}
}

// TestGzipBomb: a small blob that inflates past the limit stops there.
func TestGzipBomb(t *testing.T) {
	const limit = 1 << 20
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range 64 { // 64 MiB of zeros, ~64 KiB compressed
		if _, err := zw.Write(zero); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	root := fixture.CleanCopy(t)
	write(t, root, cpPkg+"/files/components.gz", buf.Bytes())
	tr := loadTree(t, root, Options{Limit: limit})
	p := find(t, tr, cpPkg)
	cm := cmNamed(t, p, "v1.10.1-control-plane")
	c := cm.Components
	ce, ok := blob.IsCorrupt(c.Blob.Err)
	if !ok || ce.Kind != blob.TooLarge || !strings.Contains(ce.Detail, "1048576") {
		t.Fatalf("bomb: err = %v, want too-large naming the limit", c.Blob.Err)
	}
	if c.Blob.RawSize != limit {
		t.Errorf("RawSize = %d, want the limit %d", c.Blob.RawSize, limit)
	}
	if c.Diff != nil {
		t.Errorf("diff computed over a bomb: %+v", c.Diff)
	}
	// No pin in this package: matched by name, not by content.
	if yaml, by := p.Layout.ComponentsYAML(cm); yaml != "files/control-plane-components.yaml" || by != model.MatchedByName {
		t.Errorf("match = %q by %q", yaml, by)
	}
	otherPackagesFine(t, tr, cpPkg)
}

func TestInvalidBase64(t *testing.T) {
	root := fixture.CleanCopy(t)
	b := read(t, root, ipamPkg+"/configmaps.yaml")
	i := bytes.Index(b, []byte("components: H4sI"))
	if i < 0 {
		t.Fatal("no base64 in the plain ConfigMap")
	}
	j := i + len("components: H4sI")
	b = append(append(append([]byte(nil), b[:j]...), "%%%"...), b[j:]...)
	write(t, root, ipamPkg+"/configmaps.yaml", b)
	tr := loadTree(t, root, Options{})
	otherPackagesFine(t, tr, ipamPkg)
	p := find(t, tr, ipamPkg)
	pr := problem(p, model.CheckBlobCorrupt, "not valid base64")
	if pr == nil || pr.File != "configmaps.yaml" || pr.Line != 12 {
		t.Fatalf("problems = %+v, want blob-corrupt at configmaps.yaml:12", p.Problems)
	}
	c := cmNamed(t, p, "v1.0.2-ipam").Components
	if c.DecodeErr == nil || c.Blob != nil || c.Diff != nil {
		t.Errorf("components = %+v", c)
	}
}

func TestBadYAML(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		b := read(t, root, ipamPkg+"/provider.yaml")
		write(t, root, ipamPkg+"/provider.yaml", append(b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n"...))
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, ipamPkg)
		p := find(t, tr, ipamPkg)
		pr := problem(p, model.CheckPackageLoad, "does not parse")
		if pr == nil || pr.File != "provider.yaml" || pr.Line < 15 {
			t.Fatalf("problems = %+v, want a parse error in provider.yaml past line 15", p.Problems)
		}
		if len(p.Providers) != 1 {
			t.Errorf("the good document was lost: %d providers", len(p.Providers))
		}
	})
	t.Run("chart", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		b := read(t, root, cpPkg+"/templates/providers.yaml")
		write(t, root, cpPkg+"/templates/providers.yaml", append(b, "---\nkind: ConfigMap\n  bad: indent\n"...))
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, cpPkg)
		p := find(t, tr, cpPkg)
		pr := problem(p, model.CheckPackageLoad, "rendered output")
		if pr == nil || pr.File != "templates/providers.yaml" || pr.Line != 15 {
			t.Fatalf("problems = %+v, want a parse error at templates/providers.yaml:15", p.Problems)
		}
		if len(p.Providers) != 1 || len(p.ConfigMaps) != 1 {
			t.Errorf("the good objects were lost:\n%s", summary(tr))
		}
	})
	t.Run("duplicate keys", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		replace(t, root, ipamPkg+"/configmaps.yaml", "  name: v1.0.2-ipam\n", "  name: v1.0.2-ipam\n  name: v1.0.3-ipam\n")
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, ipamPkg)
		p := find(t, tr, ipamPkg)
		pr := problem(p, model.CheckPackageLoad, `duplicate key "name"`)
		if pr == nil || pr.File != "configmaps.yaml" || pr.Line != 6 || !strings.Contains(pr.Message, "first at line 5") {
			t.Fatalf("problems = %+v, want a duplicate key at configmaps.yaml:6", p.Problems)
		}
		if len(p.ConfigMaps) != 0 {
			t.Errorf("an object with duplicate keys was kept")
		}
	})
	t.Run("duplicate keys in chart", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		replace(t, root, corePkg+"/templates/providers.yaml", "  version: v1.10.1-core\n", "  version: v1.10.1-core\n  version: v1.10.0-core\n")
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, corePkg)
		p := find(t, tr, corePkg)
		pr := problem(p, model.CheckPackageLoad, `duplicate key "version"`)
		if pr == nil || pr.File != "templates/providers.yaml" || pr.Line != 9 {
			t.Fatalf("problems = %+v, want a duplicate key at templates/providers.yaml:9", p.Problems)
		}
	})
	t.Run("not a string", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		replace(t, root, ipamPkg+"/configmaps.yaml", `compressed: "true"`, `compressed: true`)
		replace(t, root, ipamPkg+"/provider.yaml", `ipam-components: cozy`, `ipam-components: yes`)
		tr := loadTree(t, root, Options{})
		p := find(t, tr, ipamPkg)
		if pr := problem(p, model.CheckPackageLoad, "annotation provider.cluster.x-k8s.io/compressed"); pr == nil || pr.Line != 10 {
			t.Errorf("problems = %+v, want the unquoted true at configmaps.yaml:10", p.Problems)
		}
		if pr := problem(p, model.CheckPackageLoad, "reads as a boolean"); pr == nil || pr.File != "provider.yaml" {
			t.Errorf("problems = %+v, want the YAML 1.1 boolean yes in provider.yaml", p.Problems)
		}
	})
}

func TestSymlinks(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret.yaml", []byte("password: hunter2\n"))
	write(t, outside, "pkg/Chart.yaml", read(t, fixture.Root(), corePkg+"/Chart.yaml"))
	root := fixture.CleanCopy(t)
	link := func(target, rel string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(outside, "secret.yaml"), corePkg+"/files/secret.yaml")               // vendored file out of tree
	link(filepath.Join(outside, "secret.yaml"), corePkg+"/templates/secret.yaml")           // template out of tree
	link(filepath.Join(outside, "pkg"), "packages/system/linked")                           // a package dir out of tree
	link(filepath.Join(outside, "secret.yaml"), ipamPkg+"/secret.yaml")                     // plain manifest out of tree
	link("../../../../"+corePkg+"/files/core-components.yaml", cpPkg+"/files/in-tree.yaml") // in the tree: followed
	tr := loadTree(t, root, Options{})
	if len(tr.Packages) != 5 {
		t.Fatalf("packages:\n%s", summary(tr))
	}
	if len(tr.Problems) != 1 || tr.Problems[0].File != "packages/system/linked" || !strings.Contains(tr.Problems[0].Message, "outside the tree") {
		t.Errorf("tree problems = %+v, want the linked package directory", tr.Problems)
	}
	core := find(t, tr, corePkg)
	for _, f := range []string{"files/secret.yaml", "templates/secret.yaml"} {
		found := false
		for _, pr := range core.Problems {
			if pr.Check == model.CheckPackageLoad && pr.File == f && strings.Contains(pr.Message, "outside the tree") {
				found = true
			}
		}
		if !found {
			t.Errorf("no out-of-tree problem for %s: %+v", f, core.Problems)
		}
	}
	if core.Files["files/secret.yaml"] != nil {
		t.Error("an out-of-tree file was hashed")
	}
	if len(core.ConfigMaps) != 1 || len(core.Providers) != 1 {
		t.Errorf("core did not render past the bad link:\n%s", summary(tr))
	}
	if problem(find(t, tr, ipamPkg), model.CheckPackageLoad, "outside the tree") == nil {
		t.Errorf("no out-of-tree problem in the plain package")
	}
	cp := find(t, tr, cpPkg)
	if f := cp.Files["files/in-tree.yaml"]; f == nil || f.SHA256 != core.Files["files/core-components.yaml"].SHA256 {
		t.Errorf("in-tree symlink not followed: %+v", f)
	}
	if len(cp.Problems) != 0 {
		t.Errorf("cpprovider problems: %+v", cp.Problems)
	}
}

func TestChartFailsToRender(t *testing.T) {
	for _, tc := range []struct {
		name, tpl, want string
		line            int
	}{
		{"fail", "{{ fail \"boom\" }}\n", "boom", 1},
		{"nil pointer", "kind: ConfigMap\n{{ .Values.missing.deeper }}\n", "nil pointer", 2},
		{"parse error", "{{ if }}\n", "missing value for if", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			write(t, root, bootPkg+"/templates/broken.yaml", []byte(tc.tpl))
			tr := loadTree(t, root, Options{})
			otherPackagesFine(t, tr, bootPkg)
			p := find(t, tr, bootPkg)
			pr := problem(p, model.CheckPackageLoad, tc.want)
			if pr == nil || pr.File != "templates/broken.yaml" || pr.Line != tc.line {
				t.Fatalf("problems = %+v, want %q at templates/broken.yaml:%d", p.Problems, tc.want, tc.line)
			}
			if len(p.Providers) != 0 || p.Namespace != "cozy-cluster-api" {
				t.Errorf("package = %+v", p)
			}
		})
	}
	t.Run("bad Chart.yaml", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		write(t, root, bootPkg+"/Chart.yaml", []byte("apiVersion: v2\nname: [x\n"))
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, bootPkg)
		if pr := problem(find(t, tr, bootPkg), model.CheckPackageLoad, "Helm cannot load the chart"); pr == nil || pr.File != "Chart.yaml" {
			t.Errorf("problems = %+v", find(t, tr, bootPkg).Problems)
		}
	})
	t.Run("bad values.yaml", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		write(t, root, bootPkg+"/values.yaml", []byte("a: [\n"))
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, bootPkg)
		if pr := problem(find(t, tr, bootPkg), model.CheckPackageLoad, "cannot load values.yaml"); pr == nil || pr.File != "values.yaml" {
			t.Errorf("problems = %+v, want one pointing at values.yaml", find(t, tr, bootPkg).Problems)
		}
	})
	t.Run("irregular file", func(t *testing.T) {
		root := fixture.CleanCopy(t)
		if err := syscall.Mkfifo(filepath.Join(root, bootPkg, "files", "pipe"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		tr := loadTree(t, root, Options{})
		otherPackagesFine(t, tr, bootPkg)
		if pr := problem(find(t, tr, bootPkg), model.CheckPackageLoad, "not a regular file"); pr == nil || pr.File != "files/pipe" {
			t.Errorf("problems = %+v", find(t, tr, bootPkg).Problems)
		}
	})
	t.Run("unreadable file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode")
		}
		root := fixture.CleanCopy(t)
		f := filepath.Join(root, corePkg, "files", "metadata.yaml")
		if err := os.Chmod(f, 0); err != nil {
			t.Fatal(err)
		}
		tr := loadTree(t, root, Options{})
		if pr := problem(find(t, tr, corePkg), model.CheckPackageLoad, "cannot read"); pr == nil || pr.File != "files/metadata.yaml" {
			t.Errorf("problems = %+v", find(t, tr, corePkg).Problems)
		}
	})
}

// TestLeftoverBuildTempIgnored: a temp file that a killed build left in
// files/ is not vendored content and must not turn up as an unpinned file.
func TestLeftoverBuildTempIgnored(t *testing.T) {
	root := fixture.CleanCopy(t)
	left := cpPkg + "/files/" + atomicfile.TempPrefix + "components.gz-123"
	write(t, root, left, []byte("half a file"))
	tr := loadTree(t, root, Options{})
	p := find(t, tr, cpPkg)
	for rel := range p.Files {
		if strings.Contains(rel, atomicfile.TempPrefix) {
			t.Fatalf("leftover temp file loaded as vendored: %s", rel)
		}
	}
	if len(p.Files) == 0 {
		t.Fatal("no vendored files loaded at all")
	}
}

// TestEmptyBlob: a blob that is missing or empty renders as an empty
// binaryData value; the finding says so instead of blaming base64.
func TestEmptyBlob(t *testing.T) {
	for name, mutate := range map[string]func(root string){
		"empty":   func(root string) { write(t, root, corePkg+"/files/components.gz", nil) },
		"missing": func(root string) { os.Remove(filepath.Join(root, corePkg, "files/components.gz")) },
	} {
		t.Run(name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			mutate(root)
			tr := loadTree(t, root, Options{})
			otherPackagesFine(t, tr, corePkg)
			p := find(t, tr, corePkg)
			pr := problem(p, model.CheckBlobCorrupt, "binaryData.components is empty")
			if pr == nil || pr.File != "templates/configmaps.yaml" || !strings.Contains(pr.Hint, "missing, empty or excluded") {
				t.Fatalf("problems = %+v, want an empty-blob blob-corrupt in templates/configmaps.yaml", p.Problems)
			}
			if strings.Contains(pr.Message, "base64") {
				t.Errorf("an empty blob is not a base64 problem: %s", pr.Message)
			}
		})
	}
}

// TestOpenStaysInTree: every read of the loader goes through the tree's
// os.Root, so a path that leads out of the tree through a directory
// symlink (one swapped in after the walk looked, say) is refused, although
// a plain open would follow it.
func TestOpenStaysInTree(t *testing.T) {
	outside, root := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("kind: Secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "files")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	l := &scanner{root: root, fsys: fsys}
	fp := filepath.Join(root, "files", "secret.yaml")
	if f, err := os.Open(fp); err != nil {
		t.Fatalf("plain open: %v", err)
	} else {
		f.Close()
	}
	if f, err := l.open(fp); err == nil {
		f.Close()
		t.Fatal("the loader opened a file outside the tree")
	}
	if _, err := l.readCapped(fp, 1<<20); err == nil {
		t.Fatal("the loader read a file outside the tree")
	}
	if _, err := l.open(filepath.Join(outside, "secret.yaml")); err == nil {
		t.Fatal("the loader opened an absolute path outside the tree")
	}
}
