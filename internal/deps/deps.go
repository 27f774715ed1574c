// Package deps pins the chosen dependencies in go.mod while the packages
// that use them are being written. Remove an import once real code uses it.
package deps

import (
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/sigstore/cosign/v2/pkg/cosign"
	_ "github.com/spf13/cobra"
	_ "helm.sh/helm/v3/pkg/engine"
	_ "k8s.io/apimachinery/pkg/labels"
	_ "modernc.org/sqlite"
	_ "oras.land/oras-go/v2"
	_ "sigs.k8s.io/yaml"
)
