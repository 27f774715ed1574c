package check

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// widgetCRD is a CRD the API server accepts; the cases of
// TestJudgeCRDDecode spell one of its keys otherwise.
const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
"names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":3}}}}}}}]}}`

// judgedByStdlib is the verdict of a judge that decodes with
// encoding/json, which matches keys to fields case-insensitively: what
// each case of TestJudgeCRDDecode must differ from.
func judgedByStdlib(t *testing.T, raw []byte) (kinds []string, refusal string) {
	t.Helper()
	var v1 apiextv1.CustomResourceDefinition
	if err := json.Unmarshal(raw, &v1); err != nil {
		t.Fatal(err)
	}
	for _, ver := range v1.Spec.Versions {
		if ver.Served {
			kinds = append(kinds, gvk(v1.Spec.Group+"/"+ver.Name, v1.Spec.Names.Kind))
		}
	}
	return kinds, crdRefusalOf(&v1)
}

// TestJudgeCRDDecode: a CRD is decoded as the API server decodes it,
// keys matched case-sensitively: a key spelt in another case is an
// unknown field, which a create drops (the operator creates without a
// fieldValidation, so Warn) and the operator's later server-side apply
// is refused for; the CRD is validated without it. Each case is one
// encoding/json's case-insensitive match judged otherwise.
func TestJudgeCRDDecode(t *testing.T) {
	served := []string{"example.com/v1/Widget"}
	if v := judgeCRD([]byte(widgetCRD), true); v.Refusal != "" || !slices.Equal(v.Kinds, served) {
		t.Fatalf("clean CRD judged %+v, want accepted, serving %v", v, served)
	}
	for _, tc := range []struct {
		name, old, new string
		kinds          []string // served after the edit
		want           []string // in the refusal; none: accepted
	}{
		{"schema key in another case", `"openAPIV3Schema"`, `"openAPIv3Schema"`, served,
			[]string{"spec.versions[0].schema.openAPIV3Schema: Required value",
				`(the API server drops what it does not know before it validates: unknown field "spec.versions[0].schema.openAPIv3Schema")`}},
		{"storage key capitalised", `"storage":true`, `"Storage":true`, served,
			[]string{"must have exactly one version marked as storage version", `unknown field "spec.versions[0].Storage"`}},
		{"served key capitalised", `"served":true`, `"Served":true`, nil,
			[]string{`the operator's server-side apply of it is refused: unknown field "spec.versions[0].Served" (a create drops`}},
		{"served twice, once in another case", `"served":true`, `"served":false,"Served":true`, nil,
			[]string{`server-side apply of it is refused: unknown field "spec.versions[0].Served"`}},
		{"metadata name capitalised", `"metadata":{"name"`, `"metadata":{"Name"`, served,
			[]string{"metadata.name: Required value", `unknown field "metadata.Name"`}},
		{"group key in capitals", `"group":"example.com"`, `"GROUP":"example.com"`, []string{"/v1/Widget"},
			[]string{"spec.group: Required value", `unknown field "spec.GROUP"`}},
		{"type of a property capitalised", `"size":{"type":"integer"`, `"size":{"Type":"integer"`, served,
			[]string{"properties[spec].properties[size].type: Required value", `unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.Type"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Replace(widgetCRD, tc.old, tc.new, 1))
			if string(raw) == widgetCRD {
				t.Fatalf("%s not in the CRD", tc.old)
			}
			v := judgeCRD(raw, true)
			if !slices.Equal(v.Kinds, tc.kinds) {
				t.Errorf("serves %v, want %v", v.Kinds, tc.kinds)
			}
			for _, w := range tc.want {
				if !strings.Contains(v.Refusal, w) {
					t.Errorf("refusal %q lacks %q", v.Refusal, w)
				}
			}
			if tc.want == nil && v.Refusal != "" {
				t.Errorf("refused: %s", v.Refusal)
			}
			oldKinds, oldRefusal := judgedByStdlib(t, raw)
			if slices.Equal(oldKinds, v.Kinds) && (oldRefusal == "") == (v.Refusal == "") {
				t.Errorf("encoding/json judges it the same (serves %v, refusal %q): not a case of case-sensitivity", oldKinds, oldRefusal)
			}
		})
	}
}

// TestJudgeCRDKeysWithinItems: within items, which the API server decodes
// by hand, a key in another case is dropped without a word (no unknown
// field, on a create or a server-side apply): the schema is validated
// without it, and only what that leaves invalid is refused.
func TestJudgeCRDKeysWithinItems(t *testing.T) {
	for _, tc := range []struct {
		name, items string
		want        string // in the refusal; "": accepted
	}{
		{"clean", `{"type":"string","format":"date"}`, ""},
		{"an optional key dropped", `{"type":"string","Format":"date"}`, ""},
		{"a required key dropped", `{"Type":"string"}`, "properties[spec].properties[size].items.type: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Replace(widgetCRD, `"size":{"type":"integer","default":3`, `"size":{"type":"array","items":`+tc.items, 1))
			v := judgeCRD(raw, true)
			if (tc.want == "") != (v.Refusal == "") || !strings.Contains(v.Refusal, tc.want) || strings.Contains(v.Refusal, "unknown field") {
				t.Errorf("refusal %q, want one with %q and no unknown field", v.Refusal, tc.want)
			}
		})
	}
}

// TestJudgeCRDDuplicateKeys: a key given twice in the same case keeps its
// last value, as the API server's decoder keeps it (it warns, and drops
// the first, on a create and a server-side apply alike), and is no
// refusal of itself; nested objects given twice merge.
func TestJudgeCRDDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		kinds          []string
		want           string // in the refusal; "": accepted
	}{
		{"last served wins", `"served":true`, `"served":true,"served":false`, nil, ""},
		{"last storage wins", `"storage":true`, `"storage":true,"storage":false`, []string{"example.com/v1/Widget"},
			`must have exactly one version marked as storage version`},
		{"names given twice merge", `"names":{"plural":"widgets",`, `"names":{"plural":"widgets"},"names":{`, []string{"example.com/v1/Widget"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(strings.Replace(widgetCRD, tc.old, tc.new, 1))
			if string(raw) == widgetCRD {
				t.Fatalf("%s not in the CRD", tc.old)
			}
			v := judgeCRD(raw, true)
			if !slices.Equal(v.Kinds, tc.kinds) {
				t.Errorf("serves %v, want %v", v.Kinds, tc.kinds)
			}
			if (tc.want == "") != (v.Refusal == "") || !strings.Contains(v.Refusal, tc.want) {
				t.Errorf("refusal %q, want one with %q", v.Refusal, tc.want)
			}
		})
	}
}

// FuzzJudgeCRD: whatever JSON a CRD document turns into, the judge
// answers (no panic; Judge would report one as an internal error) and
// answers the same twice, and a CRD it accepts is one the API server's
// strict decode finds no unknown field in.
func FuzzJudgeCRD(f *testing.F) {
	f.Add([]byte(widgetCRD))
	f.Add([]byte(strings.Replace(widgetCRD, `"openAPIV3Schema"`, `"openAPIv3Schema"`, 1)))
	f.Add([]byte(strings.Replace(widgetCRD, `"served":true`, `"served":false,"Served":true`, 1)))
	f.Add([]byte(`{"spec":{"versions":[{"served":1e400}]}}`))
	f.Add([]byte(`{"metadata":{"name":"a.b"},"metadata":{"name":"c.d"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := judgeCRD(raw, true)
		if w := judgeCRD(raw, true); w.Refusal != v.Refusal || !slices.Equal(w.Kinds, v.Kinds) || w.Decoded != v.Decoded {
			t.Fatalf("judged %+v, then %+v", v, w)
		}
		if v.Refusal != "" {
			return
		}
		var v1 apiextv1.CustomResourceDefinition
		if unknown, err := decodeCRD(raw, &v1); err != nil || len(unknown) > 0 {
			t.Fatalf("accepted, but decodes with %v, unknown fields %v", err, unknown)
		}
	})
}

// TestCRDRefusalIsStable: a CRD with more errors than the refusal shows
// (maxCRDErrors), from properties the validation walks in Go's map order,
// gets the same refusal every time it is judged, on the fast road and on
// the slow one.
func TestCRDRefusalIsStable(t *testing.T) {
	props := make([]string, 0, 2*maxCRDErrors)
	for i := range 2 * maxCRDErrors {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer","default":"x"}`, i))
	}
	raw := []byte(strings.Replace(widgetCRD, `"size":{"type":"integer","default":3}`, strings.Join(props, ","), 1))
	first := judgeCRD(raw, true).Refusal
	if !strings.Contains(first, fmt.Sprintf("and %d more", maxCRDErrors)) {
		t.Fatalf("refusal %q, want %d errors shown and %d more", first, maxCRDErrors, maxCRDErrors)
	}
	var v1 apiextv1.CustomResourceDefinition
	if _, err := decodeCRD(raw, &v1); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if got := judgeCRD(raw, true).Refusal; got != first {
			t.Fatalf("judged again (%d): %q, first %q", i, got, first)
		}
		if got := crdRefusalOf(v1.DeepCopy()); got != first {
			t.Fatalf("slow road (%d): %q, fast %q", i, got, first)
		}
	}
}
