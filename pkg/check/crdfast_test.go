package check

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// slowJudge is judgeCRD's answer by the slow road alone: the whole CRD
// decoded as v1, defaulted, converted and validated.
func slowJudge(raw []byte) (kinds []string, refused string) {
	var v1 apiextv1.CustomResourceDefinition
	unknown, err := decodeCRD(raw, &v1)
	if err != nil {
		return nil, "it does not decode: " + err.Error()
	}
	return kindsServed(&v1), refusal(crdRefusalOf(&v1), unknown)
}

// fastAgrees fails t unless fastInternalCRD, where it answers, gives the
// internal object the slow road gives (reflect.DeepEqual: nil and empty
// differ), the same kinds, and so the same verdict; true when it
// answered.
func fastAgrees(t *testing.T, raw []byte) bool {
	t.Helper()
	fv1, fast, ok := fastInternalCRD(raw)
	if !ok {
		return false
	}
	var v1 apiextv1.CustomResourceDefinition
	unknown, err := decodeCRD(raw, &v1)
	if err != nil || len(unknown) != 0 {
		t.Fatalf("fast road answered a CRD the slow road does not decode cleanly (%v, unknown %v):\n%s", err, unknown, raw)
	}
	slow, err := internalOf(&v1)
	if err != nil {
		t.Fatalf("fast road answered a CRD the slow road does not convert (%v):\n%s", err, raw)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast road's internal CRD differs from the slow road's:\nfast %+v\nslow %+v\nof %s", fast.Spec, slow.Spec, raw)
	}
	if k := kindsServed(fv1); !slices.Equal(k, kindsServed(&v1)) {
		t.Fatalf("fast road serves %v, slow road %v", k, kindsServed(&v1))
	}
	kinds, want := slowJudge(raw)
	if v := judgeCRD(raw, true); v.Refusal != want || !slices.Equal(v.Kinds, kinds) {
		t.Fatalf("judged %+v, slow road: kinds %v, refusal %q", v, kinds, want)
	}
	return true
}

// TestFastCRDAgrees: on every CRD of the fixture trees and the examples
// (and of $PINSEAL_BENCH_TREE when set), the fast road gives what the
// slow road gives, and takes most of them.
func TestFastCRDAgrees(t *testing.T) {
	roots := []string{filepath.Join("..", "..", "testdata", "tree"), filepath.Join("..", "..", "testdata", "tree-dirty"), filepath.Join("..", "..", "examples")}
	if r := os.Getenv("PINSEAL_BENCH_TREE"); r != "" {
		roots = append(roots, r)
	}
	for _, root := range roots {
		crds := treeCRDs(t, root)
		fast := 0
		for _, c := range crds {
			if fastAgrees(t, c) {
				fast++
			}
		}
		t.Logf("%s: %d CRDs, %d by the fast road", root, len(crds), fast)
		if len(crds) > 0 && fast*2 < len(crds) {
			t.Errorf("%s: only %d of %d CRDs by the fast road", root, fast, len(crds))
		}
	}
}

// TestFastCRDCases: the constructs the fast road decodes by hand or hands
// to the API server's code, each judged as the slow road judges it.
func TestFastCRDCases(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		fast           bool // the fast road answers
	}{
		{"clean", "", "", true},
		{"every field it decodes", `"size":{"type":"integer","default":3}`,
			`"size":{"type":"integer","default":3,"description":"a \"size\"\n\u00e9 ü","format":"int32","title":"t","maximum":10.5,"minimum":-1,"exclusiveMaximum":true,"exclusiveMinimum":false,"multipleOf":1,"nullable":true,"example":7,"enum":[1,2,3]},` +
				`"s":{"type":"string","maxLength":5,"minLength":0,"pattern":"^a","x-kubernetes-validations":[{"rule":"self.size() > 0","message":"m"}]},` +
				`"l":{"type":"array","maxItems":3,"minItems":1,"uniqueItems":false,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}}}},` +
				`"m":{"type":"object","maxProperties":2,"minProperties":0,"x-kubernetes-map-type":"granular","additionalProperties":{"type":"string","unknownInItems":1}},` +
				`"b":{"type":"object","additionalProperties":false,"x-kubernetes-preserve-unknown-fields":true},` +
				`"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},` +
				`"i":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},` +
				`"o":{"type":"object","default":{"a":[1,2.5,"x",null,true]},"oneOf":[{"required":["a"]}],"allOf":[{"required":["a"]}],"not":{"required":["b"]},"properties":{"a":{"type":"array","items":{"type":"string"}},"b":{"type":"string"}}}`,
			true},
		{"empty lists and maps", `"size":{"type":"integer","default":3}`, `"size":{"type":"object","required":[],"properties":{},"allOf":[],"x-kubernetes-list-map-keys":[],"x-kubernetes-validations":[]}`, true},
		{"items as a list", `"size":{"type":"integer","default":3}`, `"size":{"type":"array","items":[{"type":"string"}]}`, true},
		{"a null default", `"default":3`, `"default":null`, true},
		{"a key with an escape", `"type":"integer"`, `"typ\u0065":"integer"`, true},
		{"an unknown key", `"type":"integer"`, `"type":"integer","bogus":1`, false},
		{"an unknown key in another case", `"type":"integer"`, `"Type":"integer"`, false},
		{"a type error", `"default":3`, `"default":3,"maxLength":"5"`, false},
		{"a float for an integer", `"default":3`, `"default":3,"maxLength":5.0`, false},
		{"a key twice in a schema", `"default":3`, `"default":3,"default":4`, true},
		{"a property twice", `"size":{"type":"integer","default":3}`, `"size":{"type":"integer"},"size":{"type":"string"}`, true},
		{"a key twice on the way", `"versions":[`, `"versions":[],"versions":[`, false},
		{"two equal versions", `"storage":true,`, `"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},{"name":"v2","served":true,"storage":false,`, true},
		{"two versions, one without a schema", `{"name":"v1","served":true,"storage":true,`, `{"name":"v0","served":true,"storage":false},{"name":"v1","served":true,"storage":true,`, true},
		{"an invalid schema", `"type":"integer","default":3`, `"type":"integer","default":"x"`, true},
		{"invalid JSON inside a schema", `"default":3`, `"default":03`, false},
		{"a control character in a string", `"type":"integer"`, "\"type\":\"int\x01eger\"", false},
		{"invalid UTF-8", `"type":"integer"`, "\"description\":\"\xff\",\"type\":\"integer\"", true},
		{"a deep schema", `"type":"integer","default":3`, strings.Repeat(`"type":"object","properties":{"a":{`, 300) + `"type":"string"` + strings.Repeat(`}}`, 300), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Replace(widgetCRD, tc.old, tc.new, 1))
			if tc.old != "" && string(raw) == widgetCRD {
				t.Fatalf("%s not in the CRD", tc.old)
			}
			if got := fastAgrees(t, raw); got != tc.fast {
				t.Errorf("fast road answered: %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzFastCRD: whatever the JSON, the fast road answers only with what
// the slow road gives.
func FuzzFastCRD(f *testing.F) {
	f.Add([]byte(widgetCRD))
	f.Add([]byte(strings.Replace(widgetCRD, `"storage":true,`, `"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},{"name":"v2","served":true,"storage":false,`, 1)))
	f.Add([]byte(strings.Replace(widgetCRD, `"size":{"type":"integer","default":3}`, `"size":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","enum":["a",1]}}},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"]}`, 1)))
	f.Add([]byte(strings.Replace(widgetCRD, `"default":3`, `"default":3,"maximum":1e400`, 1)))
	f.Add([]byte(strings.Replace(widgetCRD, `"default":3`, `"default":{"a":1},"x-kubernetes-validations":[{"rule":"true"}]`, 1)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fastAgrees(t, raw)
	})
}
