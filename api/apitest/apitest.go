// Package apitest compiles the JSON Schemas of package api for tests, so
// that every test validates against the embedded documents the programs
// serve, compiled one way.
package apitest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pinseal/pinseal/api"
)

var (
	reportOnce   sync.Once
	reportSchema *jsonschema.Schema
	reportErr    error
)

// Compile compiles the JSON Schema doc, known as name (the name its
// relative references resolve against), or fails the test.
func Compile(t testing.TB, name string, doc []byte) *jsonschema.Schema {
	t.Helper()
	s, err := compile(name, doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func compile(name string, doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, v); err != nil {
		return nil, err
	}
	return c.Compile(name)
}

// ReportSchema is api.ReportSchema (report.schema.json) compiled; it is
// compiled once per test binary.
func ReportSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	reportOnce.Do(func() { reportSchema, reportErr = compile("report.schema.json", api.ReportSchema) })
	if reportErr != nil {
		t.Fatalf("compile api/report.schema.json: %v", reportErr)
	}
	return reportSchema
}

// Validate reports whether the JSON document data matches s.
func Validate(s *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}
