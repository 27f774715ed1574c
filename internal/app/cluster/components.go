package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/pkg/blob"
)

// Installed is what a release's components install that the workload and
// CRD checks compare: its Deployments and CRDs.
type Installed struct {
	Deployments []*Deployment // Namespace as written in the components
	CRDs        []*CRD
}

// content is a ConfigMap's components as the operator reads them:
// inflated when the compressed annotation says gzip, else as stored.
// limit bounds the inflated size.
func content(cm *ConfigMap, limit int64) ([]byte, blob.Digest, error) {
	if cm.Components == nil {
		return nil, blob.Digest{}, errors.New("no components entry")
	}
	if cm.Annotations["provider.cluster.x-k8s.io/compressed"] != "true" {
		return cm.Components, sha(cm.Components), nil
	}
	var buf bytes.Buffer
	info := blob.InspectTo(bytes.NewReader(cm.Components), limit, &buf)
	if info.Err != nil {
		return nil, blob.Digest{}, fmt.Errorf("compressed components do not inflate: %w", info.Err)
	}
	return buf.Bytes(), info.RawSHA256, nil
}

// object is the part of a components document parseInstalled reads.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		workloadSpecJSON
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
}

// parseInstalled reads the Deployments and CRDs of a components stream.
func parseInstalled(components []byte) (*Installed, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(components)))
	in := &Installed{}
	for n := 1; ; n++ {
		doc, err := r.Read()
		if err == io.EOF {
			return in, nil
		}
		if err != nil {
			return in, fmt.Errorf("components document %d: %w", n, err)
		}
		if !bytes.Contains(doc, []byte("Deployment")) && !bytes.Contains(doc, []byte("CustomResourceDefinition")) {
			continue
		}
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return in, fmt.Errorf("components document %d: %w", n, err)
		}
		switch o.Kind {
		case "Deployment":
			d := &Deployment{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, Replicas: o.Spec.Replicas}
			for _, c := range o.Spec.Template.Spec.Containers {
				d.Containers = append(d.Containers, Container{Name: c.Name, Image: c.Image})
			}
			in.Deployments = append(in.Deployments, d)
		case "CustomResourceDefinition":
			c := &CRD{Name: o.Metadata.Name}
			for _, v := range o.Spec.Versions {
				c.Versions = append(c.Versions, CRDVersion{Name: v.Name, Served: v.Served, Storage: v.Storage})
			}
			in.CRDs = append(in.CRDs, c)
		}
	}
}
