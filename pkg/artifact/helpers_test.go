package artifact

import (
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

const testYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: capmox-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
`

const testMetadata = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- major: 0
  minor: 6
  contract: v1beta1
- major: 0
  minor: 7
  contract: v1beta1
`

func gz(t testing.TB, data string) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testRelease(t testing.TB) Release {
	return Release{
		ArtifactConfig: model.ArtifactConfig{
			Kind:     "InfrastructureProvider",
			Name:     "proxmox",
			Release:  "v0.7.7-infraprovider-proxmox",
			Version:  "v0.7.7",
			Contract: "v1beta1",
			Type:     "infrastructure",
			Pins: []pin.Source{{
				URL:    "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/infrastructure-components.yaml",
				SHA256: strings.Repeat("ab", 32),
				To:     "files/infrastructure-components.yaml",
			}},
			BuilderVersion: "v0.1.0-test",
		},
		Blob:     gz(t, testYAML),
		YAML:     []byte(testYAML),
		Metadata: []byte(testMetadata),
	}
}

// testRegistry starts go-containerregistry's in-process registry on
// 127.0.0.1 and returns its host:port.
func testRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// pushFault is a registry fault a push meets: a failed push writes no tag,
// and pushing again once the fault is gone completes.
type pushFault struct {
	name string
	rule testpeer.Rule
}

// faultOn injects fault into the requests with method whose path contains
// pathContains, and lets every other request pass.
func faultOn(method, pathContains string, fault testpeer.Fault) testpeer.Rule {
	return func(r *http.Request) testpeer.Fault {
		if testpeer.Match(r, method, pathContains) {
			return fault
		}
		return testpeer.Pass
	}
}

// pushFaults are the faults TestPushFaults and TestIntegrationPushFaults
// put between a push and its registry.
func pushFaults() []pushFault {
	return []pushFault{
		{"registry refuses the manifest (403)", faultOn(http.MethodPut, "/manifests/", testpeer.Deny)},
		{"registry refuses the blob upload (403)", faultOn(http.MethodPost, "/blobs/uploads/", testpeer.Deny)},
		{"5xx on the manifest", faultOn(http.MethodPut, "/manifests/", testpeer.Status500)},
		{"5xx starting an upload", faultOn(http.MethodPost, "/blobs/uploads/", testpeer.Status503)},
		{"connection dropped mid-upload", faultOn(http.MethodPut, "/blobs/uploads/", testpeer.Drop)},
		{"registry hangs on the manifest", faultOn(http.MethodPut, "/manifests/", testpeer.Hang)},
	}
}
