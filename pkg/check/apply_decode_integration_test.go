//go:build integration

package check_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
)

// serverCRD is a CRD the API server accepts; GROUP is replaced by a group
// of each case's own.
const serverCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.GROUP"},
"spec":{"group":"GROUP","scope":"Namespaced",
"names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}}`

// richSchema is a property of each field the judge decodes by hand.
const richSchema = `"size":{"type":"integer","minimum":0,"maximum":10,"multipleOf":1,"default":3,"enum":[1,2,3],"description":"a \"size\"\nof it"},` +
	`"name":{"type":"string","maxLength":10,"minLength":1,"pattern":"^[a-z]+$","x-kubernetes-validations":[{"rule":"self.size() > 0","message":"empty"}]},` +
	`"ports":{"type":"array","maxItems":4,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],"items":{"type":"object","required":["port"],"properties":{"port":{"type":"integer","format":"int32"},"proto":{"type":"string","default":"TCP","Format":"dropped"}}}},` +
	`"labels":{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"granular","maxProperties":8},` +
	`"any":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},` +
	`"free":{"type":"object","nullable":true,"x-kubernetes-preserve-unknown-fields":true}`

// secondVersion is a version v2 of serverCRD, its property size's schema
// SIZE.
const secondVersion = `{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":SIZE}}}}}}`

// TestJudgeCRDDecodeAgreesWithAPIServer: the real kube-apiserver, sent
// each CRD as the operator sends it, first a create without a
// fieldValidation (clusterctl's), then a server-side apply of the same
// body (the operator's re-apply from its cache), refuses exactly the CRDs
// the judge refuses, on the field the judge names, and serves exactly the
// kinds the judge says a CRD serves: a key in another case is an unknown
// field, which the create drops with a warning and the server-side apply
// is refused for.
func TestJudgeCRDDecodeAgreesWithAPIServer(t *testing.T) {
	srv := kubetest.Start(t)
	hc, err := rest.HTTPClientFor(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	send := func(t *testing.T, method, path, contentType string, body []byte) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions"+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), strings.Join(resp.Header.Values("Warning"), "; ")
	}
	for i, tc := range []struct {
		name, old, new string
		createRefused  bool
		applyRefused   string   // the field the server-side apply is refused for; "": accepted
		warns          []string // in the create's warning; none: it gives none
	}{
		{"clean", "", "", false, "", nil},
		{"schema key in another case", `"openAPIV3Schema"`, `"openAPIv3Schema"`, true, "", nil},
		{"storage key capitalised", `"storage":true`, `"Storage":true`, true, "", nil},
		{"served key capitalised", `"served":true`, `"Served":true`, false, "spec.versions[0].Served",
			[]string{"unknown field", "spec.versions[0].Served"}},
		{"served twice, once in another case", `"served":true`, `"served":false,"Served":true`, false, "spec.versions[0].Served",
			[]string{"unknown field", "spec.versions[0].Served"}},
		{"served twice in the same case", `"served":true`, `"served":false,"served":true`, false, "",
			[]string{"duplicate field", "spec.versions[0].served"}},
		{"type of a property capitalised", `"size":{"type":"integer"`, `"size":{"Type":"integer"`, true, "", nil},
		{"a key in another case within items", `"size":{"type":"integer"`, `"size":{"type":"array","items":{"type":"string","Format":"date"}`, false, "", nil},
		// The schemas the judge decodes by hand (fastInternalCRD), and the
		// conversion's hoisting of equal per-version schemas, which names
		// the fields of its errors.
		{"a schema of each field decoded by hand", `"size":{"type":"integer"}`, richSchema, false, "", nil},
		{"an invalid default", `"size":{"type":"integer"}`, `"size":{"type":"integer","default":"x"}`, true, "", nil},
		{"two versions, the same invalid schema", `"size":{"type":"integer"}}}}}}}]`,
			`"size":{"type":"integer","default":"x"}}}}}}},` + strings.Replace(secondVersion, "SIZE", `{"type":"integer","default":"x"}`, 1) + `]`, true, "", nil},
		{"two versions, the second's schema invalid", `"size":{"type":"integer"}}}}}}}]`,
			`"size":{"type":"integer"}}}}}}},` + strings.Replace(secondVersion, "SIZE", `{"type":"integer","default":"x"}`, 1) + `]`, true, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := fmt.Sprintf("c%d.example.com", i)
			raw := []byte(strings.ReplaceAll(strings.Replace(serverCRD, tc.old, tc.new, 1), "GROUP", group))
			v := check.NewCRDJudge(nil).Judge(sha256.Sum256(raw), model.AppliedObject{APIVersion: "apiextensions.k8s.io/v1",
				Kind: "CustomResourceDefinition", Name: "widgets." + group}, raw)
			if refused := tc.createRefused || tc.applyRefused != ""; (v.Refusal != "") != refused {
				t.Fatalf("judge's refusal %q, want refused %v", v.Refusal, refused)
			}
			code, body, warnings := send(t, http.MethodPost, "", "application/json", raw)
			if tc.createRefused {
				// The judge quotes the API server's field errors: the first
				// names the field the server refuses.
				field, _, _ := strings.Cut(strings.TrimPrefix(v.Refusal, "["), ": ")
				if code != http.StatusUnprocessableEntity || !strings.Contains(body, field) {
					t.Fatalf("create answered %d %s (warnings %q), want 422 on %s", code, body, warnings, field)
				}
				return
			}
			if code != http.StatusCreated {
				t.Fatalf("create answered %d %s, want it created", code, body)
			}
			if (tc.warns == nil) != (warnings == "") {
				t.Errorf("create warned %q, want %q", warnings, tc.warns)
			}
			for _, w := range tc.warns {
				if !strings.Contains(warnings, w) {
					t.Errorf("create warned %q, want %q in it", warnings, w)
				}
			}
			var stored apiextv1.CustomResourceDefinition
			if err := json.Unmarshal([]byte(body), &stored); err != nil {
				t.Fatal(err)
			}
			var served []string
			for _, ver := range stored.Spec.Versions {
				if ver.Served {
					served = append(served, stored.Spec.Group+"/"+ver.Name+"/"+stored.Spec.Names.Kind)
				}
			}
			if !slices.Equal(served, v.Kinds) {
				t.Errorf("API server serves %v, the judge says %v", served, v.Kinds)
			}

			code, body, _ = send(t, http.MethodPatch, "/widgets."+group+"?fieldManager=capi-operator&force=true", "application/apply-patch+yaml", raw)
			if tc.applyRefused == "" {
				if code != http.StatusOK {
					t.Errorf("server-side apply answered %d %s, want it applied", code, body)
				}
				return
			}
			if code < 400 || !strings.Contains(body, "."+tc.applyRefused+": field not declared in schema") {
				t.Errorf("server-side apply answered %d %s, want it refused for %s", code, body, tc.applyRefused)
			}
			if !strings.Contains(v.Refusal, `unknown field "`+tc.applyRefused+`"`) {
				t.Errorf("judge's refusal %q does not name %s", v.Refusal, tc.applyRefused)
			}
		})
	}
}
