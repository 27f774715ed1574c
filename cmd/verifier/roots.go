package main

// The container image (internal/ociimage) is the static binary alone, with
// no CA bundle on disk: these roots are used only when the system has none,
// so https git sources and registries verify there too.
import _ "golang.org/x/crypto/x509roots/fallback"
