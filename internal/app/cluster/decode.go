package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pinseal/pinseal/pkg/model"
)

// The objects of a list are decoded one at a time, as the response
// streams in, into types that hold only the fields the checks read:
// everything else (schemas, managed fields' other entries, other data
// keys, status beyond the conditions) is skipped by the decoder, and the
// free-text fields an object may make as long as it likes (condition
// messages, annotations) are cut to MaxField bytes as they are decoded. A
// page costs what its largest object weighs while it is decoded, and what
// is kept of it afterwards, not the page.

// MaxField bounds a free-text field kept of a cluster object (a condition
// message or reason, an annotation's value, a label's value).
const MaxField = 1 << 10

// capped is a JSON string kept to its first MaxField bytes (whole UTF-8
// characters), with "…" when cut. A longer value is cut before it is
// unquoted: its whole length is never allocated as a string.
type capped string

func (c *capped) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = ""
		return nil
	}
	cut := false
	// 6 bytes of input hold at most one character (\uXXXX): twice as many
	// as are kept, plus the quotes, is enough to fill MaxField.
	if len(b) > 2*MaxField+2 {
		b = b[:2*MaxField+1]
		// Do not end inside an escape: back off to before the last
		// backslash of the tail.
		if i := strings.LastIndexByte(string(b[len(b)-6:]), '\\'); i >= 0 {
			b = b[:len(b)-6+i]
		}
		b = append(b[:len(b):len(b)], '"')
		cut = true
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s) > MaxField {
		s, cut = s[:MaxField], true
	}
	if cut {
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	*c = capped(s)
	return nil
}

// cappedMap is a string map whose values are capped (labels and
// annotations: the checks compare short values).
type cappedMap map[string]capped

func (m cappedMap) strings() map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// objectMeta is what the checks read of metadata.
type objectMeta struct {
	Name        string    `json:"name"`
	Namespace   string    `json:"namespace"`
	Labels      cappedMap `json:"labels"`
	Annotations cappedMap `json:"annotations"`
}

// providerJSON is a provider object as the checks read it (a Turtles
// CAPIProvider adds spec.name and spec.type to the operator's spec).
type providerJSON struct {
	Metadata struct {
		objectMeta
		OwnerReferences []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Version     string `json:"version"`
		FetchConfig struct {
			OCI      string                `json:"oci"`
			URL      string                `json:"url"`
			Selector *metav1.LabelSelector `json:"selector"`
		} `json:"fetchConfig"`
		Deployment            *deploymentOverride `json:"deployment"`
		AdditionalDeployments map[string]struct {
			Deployment *deploymentOverride `json:"deployment"`
		} `json:"additionalDeployments"`
	} `json:"spec"`
	Status struct {
		InstalledVersion string `json:"installedVersion"`
		Conditions       []struct {
			Type               string      `json:"type"`
			Status             string      `json:"status"`
			Reason             capped      `json:"reason"`
			Message            capped      `json:"message"`
			LastTransitionTime metav1.Time `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// deploymentOverride is spec.deployment (or an additional deployment's).
type deploymentOverride struct {
	Replicas   *int64 `json:"replicas"`
	Containers []struct {
		Name     string  `json:"name"`
		ImageURL *string `json:"imageUrl"`
	} `json:"containers"`
}

func (d *deploymentOverride) override() Override {
	var o Override
	if d == nil {
		return o
	}
	o.Replicas = d.Replicas
	for _, c := range d.Containers {
		if c.ImageURL == nil || c.Name == "" {
			continue
		}
		if o.Images == nil {
			o.Images = map[string]string{}
		}
		o.Images[c.Name] = *c.ImageURL
	}
	return o
}

// provider is the model of a decoded provider object of kind.
func (pj *providerJSON) provider(kind string) *Provider {
	p := &Provider{Kind: kind, Namespace: pj.Metadata.Namespace, Name: pj.Metadata.Name,
		Version: pj.Spec.Version, FetchOCI: pj.Spec.FetchConfig.OCI, FetchURL: pj.Spec.FetchConfig.URL,
		InstalledVersion: pj.Status.InstalledVersion}
	for _, o := range pj.Metadata.OwnerReferences {
		if o.Kind == model.CAPIProviderKind && strings.HasPrefix(o.APIVersion, model.TurtlesAPIGroup+"/") {
			p.Owner = model.CAPIProviderKind + "/" + o.Name
		}
	}
	p.Deployment = pj.Spec.Deployment.override()
	for name, a := range pj.Spec.AdditionalDeployments {
		if p.Additional == nil {
			p.Additional = map[string]Override{}
		}
		p.Additional[name] = a.Deployment.override()
	}
	if ls := pj.Spec.FetchConfig.Selector; ls != nil {
		p.Selector = &model.Selector{MatchLabels: ls.MatchLabels}
		for _, r := range ls.MatchExpressions {
			p.Selector.MatchExpressions = append(p.Selector.MatchExpressions,
				model.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
		}
	}
	for _, c := range pj.Status.Conditions {
		p.Conditions = append(p.Conditions, Condition{Type: c.Type, Status: c.Status, Reason: string(c.Reason),
			Message: string(c.Message), Since: c.LastTransitionTime.Time})
	}
	return p
}

// capiProvider is the model of a decoded Turtles CAPIProvider: the
// operator kind of spec.type named spec.name, else metadata.name (as the
// tree's loader reads it); false for a spec.type Turtles does not know.
func (pj *providerJSON) capiProvider() (*Provider, bool) {
	kind := model.TurtlesTypes[pj.Spec.Type]
	if kind == "" {
		return nil, false
	}
	p := pj.provider(kind)
	p.Object = model.CAPIProviderKind + "/" + pj.Metadata.Name
	if pj.Spec.Name != "" {
		p.Name = pj.Spec.Name
	}
	return p, true
}

// configMapJSON is a ConfigMap as the checks read it: of its data only
// the components and metadata entries, of its managed fields only who
// owns those and the labels.
type configMapJSON struct {
	Metadata struct {
		objectMeta
		ManagedFields []struct {
			Manager   string       `json:"manager"`
			Operation string       `json:"operation"`
			Time      *metav1.Time `json:"time"`
			FieldsV1  *struct {
				Data       map[string]json.RawMessage `json:"f:data"`
				BinaryData map[string]json.RawMessage `json:"f:binaryData"`
				Metadata   struct {
					Labels json.RawMessage `json:"f:labels"`
				} `json:"f:metadata"`
			} `json:"fieldsV1"`
		} `json:"managedFields"`
	} `json:"metadata"`
	Data struct {
		Components *string `json:"components"`
		Metadata   *string `json:"metadata"`
	} `json:"data"`
	BinaryData struct {
		Components []byte `json:"components"`
	} `json:"binaryData"`
}

func (cj *configMapJSON) configMap() *ConfigMap {
	m := &cj.Metadata
	cm := &ConfigMap{Namespace: m.Namespace, Name: m.Name, Labels: m.Labels.strings(), Annotations: m.Annotations.strings()}
	if cj.BinaryData.Components != nil {
		cm.Components, cm.ComponentsInBinary = cj.BinaryData.Components, true
	} else if s := cj.Data.Components; s != nil {
		cm.Components = []byte(*s)
	}
	if s := cj.Data.Metadata; s != nil {
		cm.Metadata = []byte(*s)
	}
	for _, mf := range m.ManagedFields {
		w := Writer{Manager: mf.Manager, Operation: mf.Operation}
		if mf.Time != nil {
			w.Time = mf.Time.Time
		}
		if f := mf.FieldsV1; f != nil {
			_, bin := f.BinaryData["f:components"]
			_, data := f.Data["f:components"]
			_, meta := f.Data["f:metadata"]
			w.Content, w.Labels = bin || data || meta, f.Metadata.Labels != nil
		}
		cm.Writers = append(cm.Writers, w)
	}
	return cm
}

// deploymentJSON is a Deployment as the workload check reads it.
type deploymentJSON struct {
	Metadata objectMeta       `json:"metadata"`
	Spec     workloadSpecJSON `json:"spec"`
}

// workloadSpecJSON is the part of a Deployment's spec the checks read: its
// replicas and containers, in the cluster and in the components alike.
type workloadSpecJSON struct {
	Replicas *int64 `json:"replicas"`
	Template struct {
		Spec struct {
			Containers []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"containers"`
		} `json:"spec"`
	} `json:"template"`
}

// crdJSON is a CRD as the crd check reads it: its versions, not their schemas.
type crdJSON struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
}

// decodeList reads one page of a list response from r: each object of
// its items is handed to item (which decodes it with the decoder), and
// the continue token is returned. Only one object is decoded at a time.
func decodeList(r io.Reader, item func(*json.Decoder) error) (cont string, err error) {
	dec := json.NewDecoder(r)
	if err := delim(dec, '{'); err != nil {
		return "", err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "metadata":
			var m struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&m); err != nil {
				return "", fmt.Errorf("list metadata: %w", err)
			}
			cont = m.Continue
		case "items":
			tok, err := dec.Token()
			if err != nil {
				return "", err
			}
			if tok == nil {
				continue // null
			}
			if tok != json.Delim('[') {
				return "", fmt.Errorf("items is %v, not a list", tok)
			}
			for dec.More() {
				if err := item(dec); err != nil {
					return "", err
				}
			}
			if _, err := dec.Token(); err != nil {
				return "", err
			}
		default: // kind, apiVersion
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return "", err
	}
	return cont, nil
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return errors.New("the response is not a JSON list object")
	}
	return nil
}
