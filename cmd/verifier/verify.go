package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// verifyOptions are the flags of `verifier verify`.
type verifyOptions struct {
	output     string
	policyFile string
	keys       []string
	plain      bool
	allow      []string
	maxInflate int64
}

func newVerifyCmd() *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify REF",
		Short: "Verify one provider release artifact before it is deployed: signature, provenance, layers",
		Long: `Verify the provider release artifact REF (HOST[:PORT]/REPO:TAG,
HOST[:PORT]/REPO@sha256:<hex> or oci-layout:DIR:TAG) before it is deployed:

  signature        a trusted key (or keyless identity) signed its manifest
                   digest
  provenance       a trusted signer attested SLSA provenance about that digest,
                   by an allowed builder, listing exactly the pins of the
                   artifact's config as materials
  registry-digest  every layer matches the manifest; no layer is missing
  version-reused   the tag holds the release its config (and provenance)
                   names, in the repository of its provider (<type>-<name>)
  oci-install      every cluster-api-operator release with OCI support
                   (old and new type names) finds its components and
                   metadata, and they are the layers checked here
  blob-corrupt, blob-header, blob-yaml
                   components.gz is one valid gzip stream with a
                   reproducible header that inflates to exactly the raw
                   components YAML layer (components.yaml)
  metadata-series  metadata.yaml has the release's series, with the
                   config's contract

Trusted keys are the policy's keys plus each --key FILE; keyless signers
are the policy's identities (under its trustedRoot and tlog rule); allowed
builders are the policy's builders. Every signature form is read: Sigstore
bundles attached as OCI referrers (cosign v3, builder push; referrers API
or sha256-<hex> referrers tag) and legacy sha256-<hex>.sig/.att images
(cosign v2); a finding names the form found and why it did not verify.
Registry credentials come from the docker config and are only sent to the
registry itself. Only the registry of REF is contacted: a token realm or
redirect to another host is refused unless that host is given with
--allow-host (where no credentials are sent). The report has the same schema as ` + "`verifier check`" + `.

Exit status: 0 no error findings, 1 error findings, 2 usage or
configuration error (bad flag or policy, no trusted key, REF missing or
unreachable).`,
		Example: `  verifier verify ghcr.io/acme/capi/infrastructure-proxmox:v0.7.7-infraprovider-proxmox --key cosign.pub
  verifier verify 127.0.0.1:5000/capi/core-cluster-api@sha256:… --policy policy.yaml --plain-http -o json
  verifier verify oci-layout:out/oci/core-cluster-api:v1.10.1-core --key cosign.pub`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{Err: fmt.Errorf("verify takes exactly one REF, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", string(report.FormatHuman), "output format: human, json, sarif or github")
	f.StringVar(&o.policyFile, "policy", "", "policy file: severities, waivers, trusted keys, allowed builders (default: the built-in policies/default.yaml)")
	f.Int64Var(&o.maxInflate, "max-inflate", blob.DefaultLimit, "stop inflating components.gz past this many bytes (a gzip bomb is a finding)")
	addKeyFlags(f, &o.keys, &o.plain, &o.allow)
	return cmd
}

// addKeyFlags adds the flags check and verify share for registries.
func addKeyFlags(f *pflag.FlagSet, keys *[]string, plain *bool, allow *[]string) {
	f.StringArrayVar(keys, "key", nil, "trusted public key (cosign.pub, PEM) to verify signatures and provenance with, on top of the policy's keys; repeatable")
	f.BoolVar(plain, "plain-http", false, "talk plain HTTP to the registry (a loopback registry)")
	f.StringArrayVar(allow, "allow-host", nil, "another host (HOST[:PORT]) the registry may send the verifier to: its token realm or a redirect target (credentials are never sent there); by default only the registry itself is contacted; repeatable")
}

func runVerify(cmd *cobra.Command, ref string, o *verifyOptions) error {
	format, err := outputFormat(o.output)
	if err != nil {
		return err
	}
	if o.maxInflate <= 0 {
		return usageError{Err: errors.New("--max-inflate must be > 0")}
	}
	pol, err := loadPolicy(o.policyFile)
	if err != nil {
		return err
	}
	keys, err := loadKeys(o.keys)
	if err != nil {
		return usageError{Err: err}
	}
	r, _, err := verify.Ref(cmd.Context(), ref, verify.RefOptions{
		Policy:   pol,
		Keys:     keys,
		Registry: artifact.Options{PlainHTTP: o.plain, AllowedHosts: o.allow, Retries: fetch.DefaultRetries},
		Limit:    o.maxInflate,
	})
	if err != nil {
		// Nothing could be verified: not a findings result.
		return usageError{Err: err}
	}
	return writeReport(cmd, r, format)
}

// loadKeys reads --key files.
func loadKeys(files []string) ([]*sign.PublicKey, error) {
	var keys []*sign.PublicKey
	for _, f := range files {
		k, err := sign.LoadPublicKey(f)
		if err != nil {
			return nil, fmt.Errorf("--key %s: %w", f, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// registryOf is the registry checks of a tree check under pol when
// --registry or --allow-registry is given (nil when neither is); --key and
// --plain-http need one of them.
func registryOf(pol *policy.Policy, o *checkOptions) (*verify.Registry, error) {
	if o.registry == "" && len(o.allowRegistry) == 0 {
		if len(o.keys) > 0 || o.plain || len(o.allow) > 0 {
			return nil, usageError{Err: errors.New("--key, --plain-http and --allow-host need --registry PREFIX or --allow-registry HOST")}
		}
		return nil, nil
	}
	var prefix artifact.Prefix
	if o.registry != "" {
		var err error
		if prefix, err = artifact.ParsePrefix(o.registry); err != nil {
			return nil, usageError{Err: fmt.Errorf("--registry: %w", err)}
		}
	}
	for _, h := range o.allowRegistry {
		if err := verify.ValidAllowEntry(h); err != nil {
			return nil, usageError{Err: fmt.Errorf("--allow-registry: %w", err)}
		}
	}
	keys, err := loadKeys(o.keys)
	if err != nil {
		return nil, usageError{Err: err}
	}
	reg, err := verify.NewRegistry(pol, verify.RegistryOptions{
		Prefix:   prefix,
		Allow:    allowed(prefix, o.allowRegistry),
		Registry: artifact.Options{PlainHTTP: o.plain, AllowedHosts: o.allow, Retries: fetch.DefaultRetries},
		Keys:     keys,
	})
	if err != nil {
		return nil, usageError{Err: err}
	}
	return reg, nil
}

// allowed is what `verifier check` lets providers' spec.fetchConfig.oci be
// read from: the --registry host and each --allow-registry host.
func allowed(prefix artifact.Prefix, allow []string) []string {
	out := slices.Clone(allow)
	if prefix.Host != "" {
		out = append(out, prefix.Host)
	}
	return out
}
