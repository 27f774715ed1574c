// Package api holds the documents that describe pinseal's interfaces, so
// that programs serve exactly what is checked in.
package api

import _ "embed"

// OpenAPI is openapi.yaml: the OpenAPI 3.1 document of the verifier service
// (`verifier serve`), served at /openapi.yaml. It refers to ReportSchema by
// the relative reference report.schema.json.
//
//go:embed openapi.yaml
var OpenAPI []byte

// ReportSchema is report.schema.json: the JSON Schema of the report.
//
//go:embed report.schema.json
var ReportSchema []byte
