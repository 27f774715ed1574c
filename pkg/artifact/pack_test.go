package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
)

func packed(t *testing.T, rel Release) (ocispec.Descriptor, ocispec.Manifest, *memory.Store) {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	desc, err := Pack(ctx, mem, rel)
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	raw, err := content.FetchAll(ctx, mem, desc)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return desc, m, mem
}

func TestPackReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	rel := testRelease(t)
	d1, _, _ := packed(t, rel)
	d2, _, _ := packed(t, testRelease(t))
	if d1.Digest != d2.Digest {
		t.Fatalf("same release packed to %s and %s", d1.Digest, d2.Digest)
	}

	// Every input that is content changes the digest.
	changes := map[string]func(*Release){
		"yaml":     func(r *Release) { r.YAML = append([]byte(nil), append(r.YAML, '\n')...) },
		"blob":     func(r *Release) { r.Blob = gz(t, testYAML+"#") },
		"metadata": func(r *Release) { r.Metadata = []byte(testMetadata + "\n") },
		"release":  func(r *Release) { r.Release = "v0.7.7-infraprovider-proxmox.1" },
		"contract": func(r *Release) { r.Contract = "v1beta2" },
		"pins":     func(r *Release) { r.Pins[0].SHA256 = strings.Repeat("cd", 32) },
		"builder":  func(r *Release) { r.BuilderVersion = "v0.2.0" },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			r := testRelease(t)
			change(&r)
			d, _, _ := packed(t, r)
			if d.Digest == d1.Digest {
				t.Fatalf("changing %s kept digest %s", name, d.Digest)
			}
		})
	}
}

func TestPackSourceDateEpoch(t *testing.T) {
	tests := []struct {
		env     string
		want    string
		wantErr bool
	}{
		{"", DefaultCreated, false},
		{"0", "1970-01-01T00:00:00Z", false},
		{"1700000000", "2023-11-14T22:13:20Z", false},
		{"yesterday", "", true},
		{"-5", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", tt.env)
			_, err := Pack(context.Background(), memory.New(), testRelease(t))
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
					t.Fatalf("Pack error = %v, want one naming SOURCE_DATE_EPOCH", err)
				}
				return
			}
			_, m, _ := packed(t, testRelease(t))
			if got := m.Annotations[ocispec.AnnotationCreated]; got != tt.want {
				t.Fatalf("created = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPackLayout(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	rel := testRelease(t)
	rel.Type, rel.Kind, rel.Name = "control-plane", "ControlPlaneProvider", "talos"
	_, m, mem := packed(t, rel)

	if m.ArtifactType != ArtifactType || m.MediaType != ocispec.MediaTypeImageManifest {
		t.Fatalf("artifactType %q mediaType %q", m.ArtifactType, m.MediaType)
	}
	if m.Config.MediaType != ConfigMediaType {
		t.Fatalf("config media type %q", m.Config.MediaType)
	}
	want := []struct {
		title string
		data  []byte
	}{
		{"components.gz", rel.Blob},
		{"metadata.yaml", rel.Metadata},
		{"components.yaml", rel.YAML},
	}
	if len(m.Layers) != len(want) {
		t.Fatalf("%d layers, want %d", len(m.Layers), len(want))
	}
	for i, w := range want {
		l := m.Layers[i]
		if got := l.Annotations[ocispec.AnnotationTitle]; got != w.title {
			t.Errorf("layer %d title %q, want %q", i, got, w.title)
		}
		b, err := content.FetchAll(ctx, mem, l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, w.data) {
			t.Errorf("layer %s bytes differ from the input", w.title)
		}
	}
	raw, err := content.FetchAll(ctx, mem, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "name", "type", "release", "version", "contract", "pins", "builderVersion"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %q: %s", k, raw)
		}
	}
	if cfg["contract"] != "v1beta1" || cfg["release"] != rel.Release {
		t.Errorf("config = %s", raw)
	}
}

func TestReleaseValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Release)
		want   string
	}{
		{"ok", func(*Release) {}, ""},
		{"type", func(r *Release) { r.Type = "infra" }, `type "infra"`},
		{"tag", func(r *Release) { r.Release = "v1.0.0/x" }, "not a valid OCI tag"},
		{"repo name", func(r *Release) { r.Name = "Proxmox" }, "not a valid OCI repository name"},
		{"blob", func(r *Release) { r.Blob = nil }, "blob is empty"},
		{"yaml", func(r *Release) { r.YAML = nil }, "components YAML is empty"},
		{"metadata", func(r *Release) { r.Metadata = nil }, "metadata.yaml is empty"},
		{"kind", func(r *Release) { r.Kind = "" }, "kind is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRelease(t)
			tt.change(&r)
			err := r.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}
