// Package servertest validates the verifier service's responses against
// api/openapi.yaml.
//
// It serves the tests of internal/app/service/server and of the commands
// that run it.
package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/pinseal/pinseal/api"
)

func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

var (
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	docErr error
)

// Document loads api/openapi.yaml (and the report schema it refers to),
// validates it, and returns it with a router to its operations.
func Document(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	once.Do(func() {
		ctx := context.Background()
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = true
		loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
			switch path.Base(u.Path) {
			case "openapi.yaml":
				return api.OpenAPI, nil
			case "report.schema.json":
				return api.ReportSchema, nil
			}
			return nil, fmt.Errorf("openapi.yaml refers to %s, which the test does not know", u)
		}
		d, err := loader.LoadFromDataWithPath(api.OpenAPI, &url.URL{Path: "api/openapi.yaml"})
		if err != nil {
			docErr = fmt.Errorf("load openapi.yaml: %w", err)
			return
		}
		if err := d.Validate(ctx); err != nil {
			docErr = fmt.Errorf("openapi.yaml is not valid: %w", err)
			return
		}
		d.Servers = nil // match a test server's random port
		doc = d
		router, docErr = legacy.NewRouter(d)
	})
	if docErr != nil {
		t.Fatal(docErr)
	}
	return doc, router
}

// ValidateSchema fails the test unless the JSON body matches the named
// component schema of openapi.yaml.
func ValidateSchema(t testing.TB, name string, body []byte) {
	t.Helper()
	d, _ := Document(t)
	ref := d.Components.Schemas[name]
	if ref == nil {
		t.Fatalf("openapi.yaml has no schema %s", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("body does not match schema %s: %v\n%.600s", name, err, body)
	}
}

// ValidateResponse fails the test unless the response is what openapi.yaml
// documents for the request: a documented status, headers and body schema.
func ValidateResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	_, r := Document(t)
	route, params, err := r.FindRoute(req)
	if err != nil {
		t.Errorf("%s %s: no operation in openapi.yaml: %v", req.Method, req.URL.Path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s -> %d does not match openapi.yaml: %v\nbody: %.600s", req.Method, req.URL, resp.StatusCode, err, body)
	}
}
