//go:build integration

package kubetest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// customised is what the operator v0.28.0 applies of obj, one object of
// provider p's components, when p sets no spec.deployment, spec.manager
// or variables (as the example providers), modelled on its source:
//
//   - clusterctl's repository.NewComponents (cluster-api v1.12.10, the
//     operator's dependency; cmd/clusterctl/client/repository/components.go):
//     namespaced objects are moved into the target namespace, the
//     provider's (fixTargetNamespace); a CRD's conversion webhook service
//     is moved there too (fixCRDWebhookNamespaceReference), and so is the
//     Certificate its cert-manager.io/inject-ca-from annotation names
//     (fixWebhookNamespaceReferences); every object
//     gets the labels clusterctl.cluster.x-k8s.io: "" and
//     cluster.x-k8s.io/provider: <ManifestLabel> (addCommonLabels;
//     api/v1alpha3/labels.go ManifestLabel: the name for the core
//     provider, "<type>-<name>" for the others). No image override is
//     configured, so FixImages changes nothing; the components hold no
//     ${VAR}, so the template processor changes nothing.
//   - the operator's customizeObjectsFn
//     (internal/controller/component_customizer.go): Namespace objects
//     are dropped, namespaced objects get an owner reference to the
//     provider object, and a Deployment gets spec.deployment and
//     spec.manager, which the example providers leave unset.
func customised(obj *unstructured.Unstructured, p *model.Provider, uid string) *unstructured.Unstructured {
	u := obj.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["clusterctl.cluster.x-k8s.io"] = ""
	manifest := p.Name
	if p.Kind != "CoreProvider" {
		manifest = p.Type() + "-" + p.Name
	}
	labels["cluster.x-k8s.io/provider"] = manifest
	u.SetLabels(labels)
	switch u.GetKind() {
	case "Deployment":
		u.SetNamespace(NS)
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: model.OperatorAPIVersion, Kind: p.Kind, Name: p.Name, UID: types.UID(uid)}})
	case "CustomResourceDefinition":
		if ann := u.GetAnnotations(); ann["cert-manager.io/inject-ca-from"] != "" {
			_, secret, _ := strings.Cut(ann["cert-manager.io/inject-ca-from"], "/")
			ann["cert-manager.io/inject-ca-from"] = NS + "/" + secret
			u.SetAnnotations(ann)
		}
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "conversion", "webhook", "clientConfig", "service"); ok {
			unstructured.SetNestedField(u.Object, NS, "spec", "conversion", "webhook", "clientConfig", "service", "namespace")
		}
	}
	return u
}

// compareApplied holds every CRD and Deployment of in's components, as
// the operator customises them (customised), to what the API server
// holds: the labels and annotations exactly, every other field the components set equal
// (the API server adds its defaults and metadata, which are not
// compared; status is not compared).
func (d *doorWorld) compareApplied(t *testing.T, in installed) {
	t.Helper()
	ctx := context.Background()
	prov, err := d.dyn.Resource(ProviderGVR(in.p.Kind)).Namespace(NS).Get(ctx, in.p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range docs(t, in.yaml) {
		var got *unstructured.Unstructured
		switch doc.GetKind() {
		case "CustomResourceDefinition":
			got, err = d.dyn.Resource(CRDGVR).Get(ctx, doc.GetName(), metav1.GetOptions{})
		case "Deployment":
			got, err = d.dyn.Resource(GVRDeployment).Namespace(NS).Get(ctx, doc.GetName(), metav1.GetOptions{})
		default:
			continue
		}
		n++
		what := in.p.Name + ": " + doc.GetKind() + " " + doc.GetName()
		if err != nil {
			t.Errorf("%s: the operator did not apply it: %v", what, err)
			continue
		}
		want := customised(doc, in.p, string(prov.GetUID()))
		if !reflect.DeepEqual(got.GetLabels(), want.GetLabels()) {
			t.Errorf("%s: labels %v, want %v", what, got.GetLabels(), want.GetLabels())
		}
		if !reflect.DeepEqual(got.GetAnnotations(), want.GetAnnotations()) {
			t.Errorf("%s: annotations %v, want %v", what, got.GetAnnotations(), want.GetAnnotations())
		}
		w := want.DeepCopy().Object
		delete(w, "status")
		unstructured.RemoveNestedField(w, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(w, "metadata", "labels")
		unstructured.RemoveNestedField(w, "metadata", "annotations")
		// Round-trip through JSON: numbers compare as the API server's.
		var wj, gj any
		roundTrip(t, w, &wj)
		roundTrip(t, got.Object, &gj)
		for _, diff := range subset("", wj, gj) {
			t.Errorf("%s: %s", what, diff)
		}
	}
	if n < 2 {
		t.Errorf("%s: %d CRDs and Deployments compared; the components need some of each", in.p.Name, n)
	}
}

func roundTrip(t *testing.T, in any, out *any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// subset lists where want (a JSON value) is not in got: every map key of
// want with the same value in got, lists of the same length element by
// element; a null in want is not compared.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case nil:
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v, want a map", path, got)}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, subset(path+"."+k, w[k], g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: %v, want %v", path, got, want)}
	}
	return nil
}

// cluster runs `verifier cluster` on the test cluster against the
// example tree, the signed registry and its key, and returns the checks
// with findings (check id -> messages).
func (d *doorWorld) cluster(t *testing.T) map[string][]string {
	t.Helper()
	out, err := d.run(t, nil, "verifier", "cluster", "--kubeconfig", d.srv.Kubeconfig, "--tree", filepath.Join(repoRoot, "examples", "packages"),
		"--registry", d.reg.Host+"/capi", "--plain-http", "--key", d.keyPub, "-o", "json")
	var r report.Report
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
		t.Fatalf("verifier cluster: %v (report: %v)", err, jerr)
	}
	got := map[string][]string{}
	for _, f := range r.Findings {
		got[f.Check] = append(got[f.Check], f.Provider+": "+f.Message)
	}
	if (err == nil) != (len(r.Findings) == 0) {
		t.Errorf("verifier cluster: exit %v with %d findings", err, len(r.Findings))
	}
	return got
}

// red wants findings of check id alone.
func (d *doorWorld) red(t *testing.T, id string, says ...string) {
	t.Helper()
	got := d.cluster(t)
	if len(got) != 1 || got[id] == nil {
		t.Errorf("want findings of %s alone, got %v", id, got)
		return
	}
	all := strings.Join(got[id], "\n")
	for _, s := range says {
		if !strings.Contains(all, s) {
			t.Errorf("%s findings do not say %q:\n%s", id, s, all)
		}
	}
}

func (d *doorWorld) green(t *testing.T, after string) {
	t.Helper()
	if got := d.cluster(t); len(got) != 0 {
		t.Errorf("%s: want no findings, got %v", after, got)
	}
}

// clusterPlants: `verifier cluster` on the world the operator left is
// clean, and each planted state turns exactly its check red until it is
// undone.
func (d *doorWorld) clusterPlants(t *testing.T) {
	ctx := context.Background()
	core, infra := d.core.p, d.infra.p
	d.green(t, "the world the operator left")
	cms := d.dyn.Resource(GVRConfigMap).Namespace(NS)
	prov := d.dyn.Resource(ProviderGVR(core.Kind)).Namespace(NS)

	t.Run("edited ConfigMap", func(t *testing.T) {
		orig, err := cms.Get(ctx, core.Version, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := orig.DeepCopy()
		gz, err := blob.CompressBytes(append(append([]byte(nil), d.core.yaml...), "# edited\n"...))
		if err != nil {
			t.Fatal(err)
		}
		unstructured.SetNestedField(u.Object, base64.StdEncoding.EncodeToString(gz), "binaryData", "components")
		if _, err := cms.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		d.red(t, "cluster-configmap", "ConfigMap "+NS+"/"+core.Version+" was edited in place", `"kubectl-edit"`, `not by the "helm"`)
		if err := cms.Delete(ctx, core.Version, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		CreateAs(t, d.dyn, GVRConfigMap, fresh(orig), "helm")
		d.green(t, "the ConfigMap restored")
	})

	t.Run("lagging version", func(t *testing.T) {
		setInstalled := func(v string) {
			t.Helper()
			u, err := prov.Get(ctx, core.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			unstructured.SetNestedField(u.Object, v, "status", "installedVersion")
			if _, err := prov.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setInstalled("v1.10.0-core")
		d.red(t, "cluster-installed", core.Kind+"/"+core.Name, fmt.Sprintf("%q (spec.version) but \"v1.10.0-core\" is installed", core.Version))
		setInstalled(core.Version)
		d.green(t, "the version restored")
	})

	t.Run("hand-edited image", func(t *testing.T) {
		deps := d.dyn.Resource(GVRDeployment).Namespace(NS)
		var name string
		for _, doc := range docs(t, d.core.yaml) {
			if doc.GetKind() == "Deployment" {
				name = doc.GetName()
			}
		}
		setImage := func(image string) string {
			t.Helper()
			u, err := deps.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			old := cs[0].(map[string]any)["image"].(string)
			cs[0].(map[string]any)["image"] = image
			unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
			if _, err := deps.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
			return old
		}
		orig := setImage("registry.example/capi:hotfix")
		d.red(t, "cluster-workload", "Deployment "+NS+"/"+name, "registry.example/capi:hotfix", orig)
		setImage(orig)
		d.green(t, "the image restored")
	})

	t.Run("moved tag", func(t *testing.T) {
		// The tag moved to other content, signed and attested by the
		// trusted key as builder push would: only the operator's copy is
		// then stale.
		rels, err := artifact.LoadReleases(filepath.Join(repoRoot, "examples", "packages", "capi-providers-infraprovider"), remotetest.BuilderVersion)
		if err != nil || len(rels) != 1 {
			t.Fatalf("the infrastructure package's releases: %v (%d)", err, len(rels))
		}
		moved := rels[0]
		moved.YAML = append(append([]byte(nil), moved.YAML...), "# moved\n"...)
		if moved.Blob, err = blob.CompressBytes(moved.YAML); err != nil {
			t.Fatal(err)
		}
		prefix, err := artifact.ParsePrefix(d.reg.Host + "/capi")
		if err != nil {
			t.Fatal(err)
		}
		key, err := sign.LoadPrivateKey(d.keyFile, []byte("pw"))
		if err != nil {
			t.Fatal(err)
		}
		r := remotetest.Overwrite(t, prefix, moved)
		remotetest.Finish(t, r, remotetest.Both(key))
		d.red(t, "cluster-oci", "the operator's copy of", "differs from what the tag holds now", r.Digest.String())
		orasIn(t, testpeer.Oras(t), t.TempDir(), "tag", "--plain-http", r.Repo.Name()+"@"+d.pushed[infra.Type()+"-"+infra.Name], infra.Version)
		d.green(t, "the tag moved back")
	})
}

func orasIn(t *testing.T, oras, dir string, args ...string) {
	t.Helper()
	cwd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(cwd)
	if r := testpeer.Run(t, nil, oras, args...); r.Err != nil {
		t.Fatalf("oras %s: %v", strings.Join(args, " "), r.Err)
	}
}

// fresh is a copy of u to create anew.
func fresh(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetResourceVersion("")
	c.SetUID("")
	c.SetManagedFields(nil)
	c.SetCreationTimestamp(metav1.Time{})
	return c
}

// operatorRules: for each rule of internal/operator about
// spec.fetchConfig.oci, pinseal's prediction and what the real operator
// does, each on a provider of its own namespace.
func (d *doorWorld) operatorRules(t *testing.T) {
	ctx := context.Background()
	infra := d.infra.p
	gvr := ProviderGVR(infra.Kind)
	mk := func(ns, name, version, oci string) {
		t.Helper()
		Namespace(t, d.dyn, ns)
		if err := d.create(gvr, d.provider(infra.Kind, name, ns, version, map[string]any{"oci": oci})); err != nil {
			t.Fatal(err)
		}
	}
	store := func(ns, name, version string) func() (*unstructured.Unstructured, error) {
		return func() (*unstructured.Unstructured, error) {
			return d.dyn.Resource(GVRConfigMap).Namespace(ns).Get(ctx, infra.Type()+"-"+name+"-"+version, metav1.GetOptions{})
		}
	}

	t.Run("the version label", func(t *testing.T) {
		// The operator reads a selected ConfigMap's release from its
		// version label, else its name (pkg/check VersionOf, the
		// configmap-version check): one named otherwise but labelled
		// spec.version is installed; one named spec.version but labelled
		// another release is not.
		const ns = "rules-label"
		Namespace(t, d.dyn, ns)
		pkgDir := filepath.Join(repoRoot, "examples", "packages", "capi-providers-infraprovider")
		gz := readFile(t, filepath.Join(pkgDir, "files", "components.gz"))
		meta := readFile(t, filepath.Join(pkgDir, "files", "metadata.yaml"))
		for _, c := range []struct{ name, cmName, label string }{
			{"labelled", "named-otherwise", infra.Version},
			{"mislabelled", infra.Version, "v0.0.1"},
		} {
			cmv := &model.ConfigMap{Name: c.cmName, Labels: map[string]string{model.VersionLabel: c.label, "pick": c.name}}
			if v, _ := check.VersionOf(cmv); (v == infra.Version) != (c.name == "labelled") {
				t.Fatalf("pinseal reads release %q from ConfigMap %s labelled %s", v, c.cmName, c.label)
			}
			cm := ConfigMapObject(c.cmName, cmv.Labels, map[string]string{"provider.cluster.x-k8s.io/compressed": "true"}, gz, nil, meta)
			cm.SetNamespace(ns)
			if err := d.create(GVRConfigMap, cm); err != nil {
				t.Fatal(err)
			}
			if err := d.create(gvr, d.provider(infra.Kind, c.name, ns, infra.Version,
				map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"pick": c.name}}})); err != nil {
				t.Fatal(err)
			}
		}
		waitLong(t, "the provider selecting a ConfigMap labelled spec.version to install", func() error {
			return d.installed(&model.Provider{Kind: infra.Kind, Name: "labelled"}, ns)
		})
		d.waitSays(t, ns, "mislabelled", "unable to get files for version "+infra.Version)
		if d.installed(&model.Provider{Kind: infra.Kind, Name: "mislabelled"}, ns) == nil {
			t.Error("the provider selecting a ConfigMap labelled another release was installed")
		}
	})

	t.Run("a tag overrides spec.version", func(t *testing.T) {
		oci := d.ociOf("capi", infra) + ":" + infra.Version
		const version = "v9.9.9"
		probs := operator.Check(operator.Spec{Kind: infra.Kind, Name: "tagged", Version: version, OCI: oci})
		if len(probs) != 1 || probs[0].Rule != operator.RuleTagVersion {
			t.Fatalf("pinseal's rules: %v, want %s alone", probs, operator.RuleTagVersion)
		}
		mk("rules-tag", "tagged", version, oci)
		var cm *unstructured.Unstructured
		waitLong(t, "the operator's store of the tagged release", func() (err error) { cm, err = store("rules-tag", "tagged", version)(); return err })
		// Stored as spec.version, holding what the tag holds.
		if v := cm.GetLabels()[operator.LabelVersion]; v != version {
			t.Errorf("store version label %q, want spec.version %q", v, version)
		}
		if got, _, _ := unstructured.NestedString(cm.Object, "data", "components"); got != string(d.infra.yaml) {
			t.Errorf("the store of release %s does not hold the components of tag %s", version, infra.Version)
		}
	})

	t.Run("layer titles", func(t *testing.T) {
		const name = "titled"
		p := operator.Provider{Type: infra.Type(), Name: name, Version: infra.Version}
		full := p.ComponentsTitles()[0]
		titles := map[string]bool{full: true, operator.ComponentsTitle: true, operator.MetadataTitle: true}
		found, err := operator.Find(titles, p)
		if err != nil || found.Components != full {
			t.Fatalf("pinseal's lookup picks %q (%v), want %q", found.Components, err, full)
		}
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, full), string(d.infra.yaml))
		writeFile(t, filepath.Join(dir, operator.ComponentsTitle), string(d.infra.yaml)+"# second choice\n")
		meta := readFile(t, filepath.Join(repoRoot, "examples", "packages", "capi-providers-infraprovider", "files", "metadata.yaml"))
		writeFile(t, filepath.Join(dir, operator.MetadataTitle), string(meta))
		repo := d.reg.Host + "/titles/" + infra.Type() + "-" + name
		orasIn(t, testpeer.Oras(t), dir, "push", "--plain-http", repo+":"+infra.Version, full, operator.ComponentsTitle, operator.MetadataTitle)
		// An artifact with no title the operator accepts as components.
		bad := t.TempDir()
		writeFile(t, filepath.Join(bad, "provider-components.yaml"), string(d.infra.yaml))
		writeFile(t, filepath.Join(bad, operator.MetadataTitle), string(meta))
		if _, err := operator.Find(map[string]bool{"provider-components.yaml": true, operator.MetadataTitle: true}, operator.Provider{Type: infra.Type(), Name: "untitled", Version: infra.Version}); err == nil {
			t.Fatal("pinseal's lookup accepts provider-components.yaml")
		}
		orasIn(t, testpeer.Oras(t), bad, "push", "--plain-http", d.reg.Host+"/titles/untitled:"+infra.Version, "provider-components.yaml", operator.MetadataTitle)

		mk("rules-title", name, infra.Version, "http://"+repo)
		var cm *unstructured.Unstructured
		waitLong(t, "the operator's store of the titled release", func() (err error) { cm, err = store("rules-title", name, infra.Version)(); return err })
		if got, _, _ := unstructured.NestedString(cm.Object, "data", "components"); got != string(d.infra.yaml) {
			t.Errorf("the operator stored the layer %s did not pick (%d bytes)", full, len(got))
		}
		mk("rules-title", "untitled", infra.Version, "http://"+d.reg.Host+"/titles/untitled")
		d.waitSays(t, "rules-title", "untitled", "collected artifact needs to provide components")
		if _, err := store("rules-title", "untitled", infra.Version)(); !apierrors.IsNotFound(err) {
			t.Errorf("the operator stored a release with no components title: %v", err)
		}
	})

	t.Run("a digest it cannot parse", func(t *testing.T) {
		oci := d.ociOf("capi", infra) + "@" + d.pushed[infra.Type()+"-"+infra.Name]
		_, err := operator.ParseSource(oci, infra.Version)
		var p *operator.Problem
		if !errors.As(err, &p) || p.Rule != operator.RuleDigest {
			t.Fatalf("pinseal's rules on %s: %v, want %s", oci, err, operator.RuleDigest)
		}
		mk("rules-digest", "digest", infra.Version, oci)
		d.waitSays(t, "rules-digest", "digest", "invalid registry URL specified")
		if _, err := store("rules-digest", "digest", infra.Version)(); !apierrors.IsNotFound(err) {
			t.Errorf("the operator stored a release from a digest reference: %v", err)
		}

		// HOST:PORT/REPO:TAG@DIGEST: the operator reads TAG@DIGEST as the
		// reference and fetches by digest, dropping the tag; pinseal's
		// rule still refuses it (the digest does not name the release).
		byDigest := d.ociOf("capi", infra) + ":v0.0.1@" + d.pushed[infra.Type()+"-"+infra.Name]
		src, err := operator.ParseSource(byDigest, infra.Version)
		if err != nil || !src.Digest {
			t.Fatalf("pinseal reads %s as %+v (%v), want a fetch by digest", byDigest, src, err)
		}
		if probs := operator.Check(operator.Spec{Kind: infra.Kind, Name: "bydigest", Version: infra.Version, OCI: byDigest}); len(probs) != 1 || probs[0].Rule != operator.RuleDigest {
			t.Errorf("pinseal's rules on %s: %v, want %s alone", byDigest, probs, operator.RuleDigest)
		}
		mk("rules-digest", "bydigest", infra.Version, byDigest)
		var cm *unstructured.Unstructured
		waitLong(t, "the operator's store of the release fetched by digest", func() (err error) { cm, err = store("rules-digest", "bydigest", infra.Version)(); return err })
		if got, _, _ := unstructured.NestedString(cm.Object, "data", "components"); got != string(d.infra.yaml) {
			t.Errorf("the store of the release fetched by digest is not the digest's components")
		}
	})
}

// waitSays waits until a condition of the provider, or the operator's
// log, says what.
func (d *doorWorld) waitSays(t *testing.T, ns, name, what string) {
	t.Helper()
	gvr := ProviderGVR(d.infra.p.Kind)
	waitLong(t, fmt.Sprintf("%s/%s: the operator to say %q", ns, name, what), func() error {
		u, err := d.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		b, _ := json.Marshal(conds)
		if strings.Contains(string(b), what) {
			return nil
		}
		if log, _ := os.ReadFile(d.operatorLog); strings.Contains(string(log), what) {
			return nil
		}
		return fmt.Errorf("conditions %s", b)
	})
}
