package main

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/sign"
)

// TestPushRegistrySigningFailsNoTag: `builder push --plain-http --key` to a
// registry that refuses the signature writes no release tag (the release is
// never left unsigned); run again, it pushes, signs and attests.
func TestPushRegistrySigningFailsNoTag(t *testing.T) {
	for format, refused := range map[string]string{
		"legacy": ".sig",               // the signature image's tag sha256-<hex>.sig
		"bundle": "/manifests/sha256:", // the referrer manifests, pushed by digest
	} {
		t.Run(format, func(t *testing.T) { pushRegistrySigningFailsNoTag(t, format, refused) })
	}
}

func pushRegistrySigningFailsNoTag(t *testing.T, format, refused string) {
	ctx := context.Background()
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	keys := testKeys(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	proxy := testpeer.NewFaultProxy(t, srv.URL)
	direct, err := artifact.OpenRegistry(strings.TrimPrefix(srv.URL, "http://")+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	pkg := writePushTestPkg(t)
	to := proxy.Host + "/capi"

	// The registry refuses the signature's manifest.
	proxy.Set(func(r *http.Request) testpeer.Fault {
		if testpeer.Match(r, http.MethodPut, refused) {
			return testpeer.Deny
		}
		return testpeer.Pass
	})
	_, _, err = runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key", "--signature-format", format)
	if err == nil || proxy.Injected() == 0 {
		t.Fatalf("push with a refused signature: err %v, %d faults injected; requests %v", err, proxy.Injected(), proxy.Requests())
	}
	if d, err := direct.Resolve(ctx, "v1.10.1-core"); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("release tagged (%v, %v) although its signature was refused", d.Digest, err)
	}

	// (The attestation, stored alongside, may be there already: kept, not repeated.)
	proxy.Set(nil)
	stdout, stderr, err := runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key", "--signature-format", format)
	if err != nil || !strings.Contains(stdout, "pushed ") || !strings.Contains(stdout, "signature   signed") || !strings.Contains(stdout, "provenance  ") {
		t.Fatalf("push again: %v\n%s%s", err, stdout, stderr)
	}
	desc, err := direct.Resolve(ctx, "v1.10.1-core")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sign.LoadPublicKey(keys + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := sign.Verify(ctx, direct, desc.Digest, []*sign.PublicKey{pub}); err != nil || !v.Valid {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	if v, err := sign.VerifyAttestation(ctx, direct, desc.Digest, []*sign.PublicKey{pub}); err != nil || !v.Valid {
		t.Fatalf("VerifyAttestation = %+v, %v", v, err)
	}
}

// TestPushTLogPushesNothing: --tlog is refused before anything is pushed.
func TestPushTLogPushesNothing(t *testing.T) {
	keys := testKeys(t)
	out := t.TempDir()
	_, _, err := runBuildTestCmd(t, "push", writePushTestPkg(t), "--to", "oci-layout:"+out, "--key", keys+".key", "--tlog")
	if !errors.Is(err, errTLogUnsupported) || !strings.Contains(err.Error(), "nothing was pushed") {
		t.Fatalf("push --tlog = %v, want errTLogUnsupported saying nothing was pushed", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("push --tlog wrote %d entries to the layout", len(entries))
	}
}
