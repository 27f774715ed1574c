package sign_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/release"
	"github.com/pinseal/pinseal/pkg/sign"
)

// Sign stores a cosign signature of an artifact beside it; Verify says
// whether a key the caller trusts signed it, and why not.
func ExampleSign() {
	ctx := context.Background()
	provs, err := release.Load(ctx, "../../examples/packages/capi-providers-core", release.Options{BuilderVersion: "v0.1.0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil || len(provs) != 1 || provs[0].Release == nil {
		log.Fatal("the example core package has no release: ", err)
	}
	dir, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	repo, err := artifact.OpenLayout(dir)
	if err != nil {
		log.Fatal(err)
	}
	pushed, err := artifact.Push(ctx, repo, *provs[0].Release, artifact.PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	subject := pushed.Descriptor.Digest

	signer, other := newKey(), newKey()
	res, err := sign.Sign(ctx, repo, subject, signer, sign.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("signed:", res.Status, res.Tag == sign.SignatureTag(subject))
	for _, k := range []*sign.PrivateKey{signer, other} {
		v, err := sign.Verify(ctx, repo, subject, []*sign.PublicKey{k.Public()})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("valid: %v, reason: %q\n", v.Valid, v.Reason)
	}
	// Output:
	// signed: signed true
	// valid: true, reason: ""
	// valid: false, reason: "other-key"
}

// newKey is a fresh unencrypted signing key (sign.GenerateKeyPair writes
// cosign's encrypted form, whose scrypt takes a while).
func newKey() *sign.PrivateKey {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	k, err := sign.NewPrivateKey(ec)
	if err != nil {
		log.Fatal(err)
	}
	return k
}
