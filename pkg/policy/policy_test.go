package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/policies"
)

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return apitest.Compile(t, "policy.schema.json", policies.Schema)
}

func schemaValidate(t *testing.T, s *jsonschema.Schema, doc string) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		return err
	}
	js, err := json.Marshal(jsonable(v))
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// jsonable turns YAML timestamps back into the dates they were written as.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	case time.Time:
		return x.Format(DateLayout)
	}
	return v
}

func TestDefault(t *testing.T) {
	p := Default()
	for _, c := range check.Catalog() {
		if got, want := p.Severity(c.ID), c.Severity; got != want {
			t.Errorf("default severity of %s = %q, want %q", c.ID, got, want)
		}
		// default.yaml lists every settable check with its catalog default.
		if c.ID != check.WaiverExpired {
			if s, ok := p.Checks[c.ID]; !ok || s != c.Severity {
				t.Errorf("default.yaml: checks.%s = %q (listed %v), want the catalog default %q", c.ID, s, ok, c.Severity)
			}
		}
	}
	if len(p.Waivers) != 0 {
		t.Errorf("default policy has waivers: %v", p.Waivers)
	}
	if err := schemaValidate(t, schema(t), string(policies.Default)); err != nil {
		t.Errorf("default.yaml does not match policy.schema.json: %v", err)
	}
}

func TestSchemaListsTheCatalog(t *testing.T) {
	var doc struct {
		Defs struct {
			CheckID struct {
				Enum []string `json:"enum"`
			} `json:"checkID"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(policies.Schema, &doc); err != nil {
		t.Fatal(err)
	}
	if want := settable(); !slices.Equal(doc.Defs.CheckID.Enum, want) {
		t.Errorf("policy.schema.json $defs.checkID.enum = %v, want the catalog %v", doc.Defs.CheckID.Enum, want)
	}
}

const good = `apiVersion: pinseal/v1
kind: Policy
checks:
  blob-header: warning
  pin-missing: off
waivers:
- package: packages/system/capi-providers-bootstrap
  check: blob-yaml
  provider: BootstrapProvider/talos
  reason: upstream ships it this way (#12)
  expires: 2026-06-30
- package: packages/extra/*
  check: pin-version
  reason: computed versions, tracked in #13
  expires: 2026-01-31
keys:
- cosign.pub
identities:
- issuer: https://token.actions.githubusercontent.com
  subject: https://github.com/acme/platform/.github/workflows/release.yml@refs/heads/main
- issuer: https://token.actions.githubusercontent.com
  subjectRegExp: ^https://github\.com/acme/.*$
trustedRoot: trusted_root.json
tlog: required
builders:
- https://github.com/pinseal/pinseal/cmd/builder
movingTags:
- nightly
`

func TestParseAndSchemaAgree(t *testing.T) {
	s := schema(t)
	if _, err := Parse([]byte(good), "good.yaml"); err != nil {
		t.Fatalf("Parse(good): %v", err)
	}
	if err := schemaValidate(t, s, good); err != nil {
		t.Fatalf("schema rejects good policy: %v", err)
	}
	bad := map[string]struct{ doc, want string }{
		"unknown top-level field": {strings.Replace(good, "kind: Policy", "kind: Policy\nseverity: high", 1), "field severity not found"},
		"unknown waiver field":    {strings.Replace(good, "  expires: 2026-06-30", "  expires: 2026-06-30\n  owner: me", 1), "field owner not found"},
		"unknown check":           {strings.Replace(good, "blob-header: warning", "blob-headers: warning", 1), "checks.blob-headers: unknown check"},
		"bad severity":            {strings.Replace(good, "blob-header: warning", "blob-header: fatal", 1), `severity "fatal"`},
		"bad date":                {strings.Replace(good, "2026-06-30", "30/06/2026", 1), `waivers[0].expires: "30/06/2026" is not a date`},
		"impossible date":         {strings.Replace(good, "2026-06-30", "2026-13-01", 1), `waivers[0].expires: "2026-13-01" is not a date`},
		"missing reason":          {strings.Replace(good, "  reason: upstream ships it this way (#12)\n", "", 1), "waivers[0].reason: missing"},
		"missing expiry":          {strings.Replace(good, "  expires: 2026-01-31\n", "", 1), "waivers[1].expires"},
		"waived unknown check":    {strings.Replace(good, "check: blob-yaml", "check: everything", 1), `waivers[0].check: "everything"`},
		"bad provider":            {strings.Replace(good, "provider: BootstrapProvider/talos", "provider: talos", 1), `waivers[0].provider: "talos"`},
		"wrong apiVersion":        {strings.Replace(good, "pinseal/v1", "pinseal/v2", 1), `apiVersion: "pinseal/v2" is not supported`},
		"wrong kind":              {strings.Replace(good, "kind: Policy", "kind: Pin", 1), `kind: "Pin"`},
		"duplicate key":           {strings.Replace(good, "  pin-missing: off", "  pin-missing: off\n  pin-missing: error", 1), `"pin-missing" already defined`},
		"two documents":           {good + "---\napiVersion: pinseal/v1\n", "more than one YAML document"},
		"expired waiver severity": {strings.Replace(good, "pin-missing: off", "waiver-expired: off", 1), "always an error"},
		"package-load off":        {strings.Replace(good, "pin-missing: off", "package-load: off", 1), "checks.package-load: cannot be off"},
		"empty key":               {strings.Replace(good, "- cosign.pub", `- ""`, 1), "keys[0]: empty"},
		"bad tlog":                {strings.Replace(good, "tlog: required", "tlog: always", 1), `tlog: "always"`},
		"identity without issuer": {strings.Replace(good, "- issuer: https://token.actions.githubusercontent.com\n  subject:", "- subject:", 1), "identities[0].issuer: empty"},
		"identity subject twice":  {strings.Replace(good, "  subject: https://github.com/acme/platform/.github/workflows/release.yml@refs/heads/main", "  subject: a\n  subjectRegExp: b", 1), "identities[0]: give subject or subjectRegExp, not both"},
		"identity no subject":     {strings.Replace(good, "  subject: https://github.com/acme/platform/.github/workflows/release.yml@refs/heads/main\n", "", 1), "identities[0]: give subject or subjectRegExp"},
		"bad subjectRegExp":       {strings.Replace(good, `^https://github\.com/acme/.*$`, "(", 1), "identities[1].subjectRegExp"},
		"bad moving tag":          {strings.Replace(good, "- nightly", "- -nightly", 1), `movingTags[0]: "-nightly" is not an image tag`},
		"unknown identity field":  {strings.Replace(good, "  subject: https://github.com/acme/platform", "  repo: x\n  subject: https://github.com/acme/platform", 1), "field repo not found"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "bad.yaml")
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.doc)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.yaml") {
				t.Errorf("error %q lacks %q or the file name", err, tc.want)
			}
			if name == "duplicate key" || name == "impossible date" || name == "two documents" || name == "bad subjectRegExp" {
				return // JSON Schema sees one document with unique keys, no calendar, and (format is an annotation) no RE2 compiler
			}
			if err := schemaValidate(t, schema(t), tc.doc); err == nil {
				t.Errorf("policy.schema.json accepted it")
			}
		})
	}
	if _, err := Parse(nil, "empty.yaml"); err == nil || !strings.Contains(err.Error(), "empty document") {
		t.Errorf("Parse(empty) = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if p.Source != file || p.Severity(check.BlobHeader) != report.Warning || p.Enabled(check.PinMissing) || !p.Enabled(check.BlobYAML) {
		t.Errorf("loaded policy = %+v", p)
	}
	if p.Severity("custom-extra-check") != report.Error {
		t.Errorf("unknown IDs default to error")
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load(missing) = %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "is a directory") || !strings.Contains(err.Error(), "policy YAML file") {
		t.Errorf("Load(directory) = %v, want it to say a file is needed", err)
	}

	// Keys: file paths resolve against the policy's directory; inline PEM as is.
	pem := "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"
	if err := os.WriteFile(filepath.Join(dir, "cosign.pub"), []byte(pem), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Keys = append(p.Keys, pem)
	keys, err := p.KeyPEMs()
	if err != nil || len(keys) != 2 || string(keys[0]) != pem || string(keys[1]) != pem {
		t.Errorf("KeyPEMs = %q, %v", keys, err)
	}
	p.Keys = []string{"nope.pub"}
	if _, err := p.KeyPEMs(); err == nil || !strings.Contains(err.Error(), "keys[0]") {
		t.Errorf("KeyPEMs(missing file) = %v", err)
	}
}

func TestApply(t *testing.T) {
	p, err := Parse([]byte(good), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time {
		d, err := time.Parse(DateLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		return d.Add(12 * time.Hour)
	}
	in := []report.Finding{
		{Check: check.BlobYAML, Package: "packages/system/capi-providers-bootstrap", Provider: "BootstrapProvider/talos", Message: "waived"},
		{Check: check.BlobYAML, Package: "packages/system/capi-providers-bootstrap", Provider: "BootstrapProvider/kubeadm", Message: "other provider: not waived"},
		{Check: check.BlobHeader, Package: "packages/system/core", Message: "now a warning"},
		{Check: check.PinMissing, Package: "packages/system/core", Message: "off: dropped"},
		{Check: check.PinVersion, Package: "packages/extra/capi-ipam", Message: "waived by pattern"},
		{Check: check.PinVersion, Package: "packages/extra/deeper/x", Message: "pattern does not cross /"},
	}

	// 2026-01-15: both waivers hold.
	out := p.Apply(in, day("2026-01-15"))
	got := map[string]report.Finding{}
	for _, f := range out {
		got[f.Message] = f
	}
	if len(out) != 5 {
		t.Fatalf("%d findings, want 5 (pin-missing is off): %+v", len(out), out)
	}
	if f := got["waived"]; f.Waiver == nil || f.Waiver.Expires != "2026-06-30" || f.Severity != report.Error {
		t.Errorf("waived finding = %+v", f)
	}
	if f := got["other provider: not waived"]; f.Waiver != nil {
		t.Errorf("provider-scoped waiver covered another provider: %+v", f)
	}
	if f := got["now a warning"]; f.Severity != report.Warning {
		t.Errorf("blob-header severity = %q", f.Severity)
	}
	if f := got["waived by pattern"]; f.Waiver == nil {
		t.Errorf("pattern waiver did not apply: %+v", f)
	}
	if f := got["pattern does not cross /"]; f.Waiver != nil {
		t.Errorf("pattern waiver crossed a /: %+v", f)
	}

	// The expiry day itself still holds; the day after, the waiver is an
	// error of its own and its findings count again.
	if out := p.Apply(in, day("2026-01-31")); countCheck(out, check.WaiverExpired) != 0 {
		t.Errorf("waiver expired on its last day")
	}
	out = p.Apply(in, day("2026-02-01"))
	if n := countCheck(out, check.WaiverExpired); n != 1 {
		t.Fatalf("%d waiver-expired findings on 2026-02-01, want 1", n)
	}
	for _, f := range out {
		switch {
		case f.Check == check.WaiverExpired:
			if f.Severity != report.Error || f.Package != "packages/extra/*" || !strings.Contains(f.Message, "expired on 2026-01-31") || !strings.Contains(f.Hint, "policy.yaml") {
				t.Errorf("expired waiver finding = %+v", f)
			}
		case f.Message == "waived by pattern" && f.Waiver != nil:
			t.Errorf("expired waiver still applies: %+v", f)
		}
	}
}

func countCheck(fs []report.Finding, id string) int {
	n := 0
	for _, f := range fs {
		if f.Check == id {
			n++
		}
	}
	return n
}

// TestApplyWarningCap: a finding its check marks as at most a warning stays
// a warning under an error check, and is dropped when the check is off.
func TestApplyWarningCap(t *testing.T) {
	p := Default()
	out := p.Apply([]report.Finding{
		{Check: check.PinVersion, Package: "a", Severity: report.Warning, Message: "capped"},
		{Check: check.PinVersion, Package: "a", Message: "plain"},
	}, time.Now())
	if len(out) != 2 || out[0].Severity != report.Warning || out[1].Severity != report.Error {
		t.Fatalf("%+v", out)
	}
	off, err := Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  pin-version: off\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out := off.Apply([]report.Finding{{Check: check.PinVersion, Package: "a", Severity: report.Warning, Message: "x"}}, time.Now()); len(out) != 0 {
		t.Fatalf("off: %+v", out)
	}
}

func TestExcludeAndValues(t *testing.T) {
	p, err := Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nexclude: [packages/apps/*]\nvalues:\n- package: packages/apps/kubernetes\n  files: [ci/cluster.yaml, /abs/v.yaml]\n"), "/etc/pinseal/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v := p.ValuesFiles()
	if len(p.Exclude) != 1 || len(v) != 1 || v[0].Files[0] != "/etc/pinseal/ci/cluster.yaml" || v[0].Files[1] != "/abs/v.yaml" {
		t.Fatalf("exclude %v values %+v", p.Exclude, v)
	}
	for _, bad := range []string{"exclude: ['[']\n", "values:\n- package: x\n", "values:\n- package: /abs\n  files: [a]\n"} {
		if _, err := Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\n"+bad), "p.yaml"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestAdmissionSection(t *testing.T) {
	head := "apiVersion: pinseal/v1\nkind: Policy\n"
	good := head + "admission:\n  registries: [registry.example/capi, 127.0.0.1:5000/capi]\n  pinned:\n  - {kind: InfrastructureProvider, name: docker, version: v1.10.1, url: https://example.com/x.yaml, components: " + strings.Repeat("a", 64) + ", metadata: " + strings.Repeat("b", 64) + "}\n" +
		"  gitSources:\n  - {source: fleet, commits: [" + strings.Repeat("c", 40) + "]}\n"
	if p, err := Parse([]byte(good), "good"); err != nil || len(p.Admission.Pinned) != 1 || len(p.Admission.GitSources) != 1 {
		t.Fatalf("clean admission section: %v", err)
	}
	for name, tt := range map[string]struct{ from, to, want string }{
		"registry with a tag":   {"registry.example/capi,", "registry.example/capi:v1,", "admission.registries[0]"},
		"registry with no path": {"registry.example/capi,", "registry.example,", "admission.registries[0]"},
		"version not semver":    {"version: v1.10.1", "version: latest", "admission.pinned[0].version"},
		"short digest":          {"components: " + strings.Repeat("a", 64), "components: abc", "SHA-256"},
		"unknown field":         {"pinned:", "pins:", "field pins not found"},
		"git commit a branch":   {"commits: [" + strings.Repeat("c", 40), "commits: [main", "admission.gitSources[0].commits[0]"},
		"git commit short":      {"commits: [" + strings.Repeat("c", 40), "commits: [cccccccc", "full commit hash"},
		"git no source":         {"source: fleet", "source: ''", "admission.gitSources[0].source"},
		"git no commits":        {"commits: [" + strings.Repeat("c", 40) + "]", "commits: []", "admission.gitSources[0].commits"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(good, tt.from, tt.to, 1)), "bad")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}
