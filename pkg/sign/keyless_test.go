package sign

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/sign/signtest"
)

const (
	ghIdentity = signtest.GitHubIdentity
	ghIssuer   = signtest.GitHubIssuer
)

func TestKeylessBundles(t *testing.T) {
	ctx := context.Background()
	signer := signtest.NewKeyless(t)
	tr := loadRoot(t, signer.TrustedRoot(t))
	otherRoot := loadRoot(t, signtest.NewKeyless(t).TrustedRoot(t))
	trusted := []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}

	// A log entry integrated a little after the certificate is issued (it
	// is issued when the bundle is made, after this line: under load, "now"
	// would fall before its NotBefore); well within its 10 minutes.
	now := time.Now().Add(time.Minute)
	cases := []struct {
		name      string
		identity  string
		opts      signtest.Opts
		trust     Trust
		want      model.Reason // "" = valid
		inMessage string
	}{
		{"timestamp and log", ghIdentity, signtest.Opts{Timestamp: true, TLogAt: now}, Trust{Identities: trusted, Root: tr}, "", ""},
		{"timestamp only", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: trusted, Root: tr}, "", ""},
		{"log required and present", ghIdentity, signtest.Opts{Timestamp: true, TLogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogRequired}, "", ""},
		{"tlog off, timestamp", ghIdentity, signtest.Opts{Timestamp: true, TLogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogOff}, "", ""},
		{"subject by regexp", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: []Identity{{Issuer: ghIssuer, SubjectRegExp: `^https://github\.com/acme/platform/\.github/workflows/release\.yml@refs/heads/.*$`}}, Root: tr}, "", ""},

		{"another subject", "https://github.com/evil/fork/.github/workflows/release.yml@refs/heads/main", signtest.Opts{Timestamp: true}, Trust{Identities: trusted, Root: tr}, model.WrongIdentity, "evil/fork"},
		{"another issuer", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: []Identity{{Issuer: "https://accounts.google.com", Subject: ghIdentity}}, Root: tr}, model.WrongIdentity, "accounts.google.com"},
		{"policy names another subject", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: []Identity{{Issuer: ghIssuer, Subject: "https://github.com/acme/other/.github/workflows/release.yml@refs/heads/main"}}, Root: tr}, model.WrongIdentity, "acme/other"},
		{"missing timestamp", ghIdentity, signtest.Opts{}, Trust{Identities: trusted, Root: tr}, model.NoTimestamp, "neither a signed timestamp"},
		{"tlog off and only a log entry", ghIdentity, signtest.Opts{TLogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogOff}, model.NoTimestamp, "no signed timestamp"},
		{"expired certificate (log entry after it expired)", ghIdentity, signtest.Opts{TLogAt: now.Add(30 * time.Minute)}, Trust{Identities: trusted, Root: tr}, model.CertExpired, "not valid"},
		{"log required and absent", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: trusted, Root: tr, TLog: TLogRequired}, model.TLogMissing, "transparency-log"},
		{"another trusted root", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: trusted, Root: otherRoot}, model.NoTimestamp, ""},
		{"no trusted root", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Identities: trusted}, model.UntrustedCert, "trustedRoot"},
		{"keys only", ghIdentity, signtest.Opts{Timestamp: true}, Trust{Keys: []*PublicKey{testKey(t).Public()}, Root: tr}, model.OtherKey, "trusts no identities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := repos()["layout"](t)
			a := push(t, repo, release(t, "v1.10.1-core"))
			stmt, err := signStatement(a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := AttachBundle(ctx, repo, a, signer.Bundle(t, tc.identity, ghIssuer, stmt, tc.opts), SignPredicateType); err != nil {
				t.Fatal(err)
			}
			v, err := VerifyWith(ctx, repo, a, tc.trust)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !v.Valid || !strings.Contains(v.Identity, ghIdentity) || !strings.Contains(v.Identity, ghIssuer) {
					t.Fatalf("want valid by %s: %+v", ghIdentity, v)
				}
				return
			}
			if v.Valid || v.Reason != tc.want || !strings.Contains(v.Message, tc.inMessage) || !strings.Contains(v.Message, "Sigstore bundle v0.3") {
				t.Fatalf("want %s mentioning %q and the form:\n%+v", tc.want, tc.inMessage, v)
			}
		})
	}
}

// TestKeylessWrongDigestAndAttestation: a keyless attestation verifies as
// provenance; the same identity's bundle for another digest is wrong-digest.
func TestKeylessAttestationAndWrongDigest(t *testing.T) {
	ctx := context.Background()
	signer := signtest.NewKeyless(t)
	tr := loadRoot(t, signer.TrustedRoot(t))
	trust := Trust{Identities: []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}, Root: tr}
	repo := repos()["layout"](t)
	rel := release(t, "v1.10.1-core")
	a := push(t, repo, rel)
	b := push(t, repo, release(t, "v1.10.2-core"))
	stmt, err := ProvenanceStatement(repo.Name(), a, rel)
	if err != nil {
		t.Fatal(err)
	}
	bundle := signer.Bundle(t, ghIdentity, ghIssuer, stmt, signtest.Opts{Timestamp: true, TLogAt: time.Now().Add(time.Minute)})
	if _, err := AttachBundle(ctx, repo, a, bundle, PredicateSLSAProvenance); err != nil {
		t.Fatal(err)
	}
	av, err := VerifyAttestationWith(ctx, repo, a, trust)
	if err != nil || !av.Valid || av.Provenance == nil || av.Provenance.BuilderID == "" {
		t.Fatalf("keyless provenance: %+v, %v", av, err)
	}
	if _, err := AttachBundle(ctx, repo, b, bundle, PredicateSLSAProvenance); err != nil {
		t.Fatal(err)
	}
	av, err = VerifyAttestationWith(ctx, repo, b, trust)
	if err != nil || av.Valid || av.Reason != model.WrongDigest {
		t.Fatalf("provenance of a attached to b: %+v, %v; want wrong-digest", av, err)
	}
}

func loadRoot(t *testing.T, path string) *root.TrustedRoot {
	t.Helper()
	tr, err := LoadTrustedRoot(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
