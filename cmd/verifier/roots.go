package main

import (
	"crypto/x509"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// useFallbackRoots makes the compiled-in roots (x509roots/fallback/bundle)
// the roots to verify with when the system has none: the container image
// (internal/ociimage) is the static binary alone, with no CA bundle on
// disk, and https git sources and registries must verify there too.
//
// main calls it after the render-child check rather than importing the
// fallback package for its init: a render child makes no connection, and
// parsing the roots is a seventh of a process's start-up.
func useFallbackRoots() {
	pool, _, _ := fallbackPool()
	x509.SetFallbackRoots(pool)
}

// fallbackPool parses the compiled-in roots: the pool, how many it holds
// and how many did not parse (a root this Go cannot parse cannot anchor a
// chain either).
func fallbackPool() (pool *x509.CertPool, n, bad int) {
	pool = x509.NewCertPool()
	for r := range bundle.Roots() {
		cert, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			bad++
			continue
		}
		if r.Constraint != nil {
			pool.AddCertWithConstraint(cert, r.Constraint)
		} else {
			pool.AddCert(cert)
		}
		n++
	}
	return pool, n, bad
}
