// Package policies embeds the verification policies shipped with pinseal:
// the default policy (used when no --policy is given) and its JSON Schema.
package policies

import _ "embed"

// Default is policies/default.yaml.
//
//go:embed default.yaml
var Default []byte

// Schema is policies/policy.schema.json (JSON Schema draft 2020-12).
//
//go:embed policy.schema.json
var Schema []byte
