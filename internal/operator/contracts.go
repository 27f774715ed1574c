package operator

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
)

// ContractPolicy is one Cluster API contract version: the core releases
// that implement it and the older contracts those releases still serve.
type ContractPolicy struct {
	// Contract is the contract version (v1beta1, v1beta2).
	Contract string
	// Since is the first core release series (1.11) implementing it.
	Since Series
	// Compatible are older contracts a core implementing Contract still
	// serves, each until (not including) a core series.
	Compatible []Compatibility
}

// Compatibility is an older contract a newer one stays compatible with.
type Compatibility struct {
	Contract string
	// Until is the first core series that no longer serves Contract.
	Until Series
}

// Series is a release series, major.minor.
type Series struct{ Major, Minor uint }

func (s Series) less(o Series) bool {
	return s.Major < o.Major || (s.Major == o.Major && s.Minor < o.Minor)
}

// ContractSource is where Contracts was read.
const ContractSource = "Cluster API v1.14.0 docs/book/src/reference/versions.md (\"Cluster API release vs contract versions\"), metadata.yaml (release series to contract), internal/contract/version.go GetCompatibleVersions"

// Contracts is Cluster API's documented support policy for contracts, the
// one table pinseal reads it from (ContractSource):
//
//   - each core release implements one contract, the newest API version of
//     the release; metadata.yaml of v1.14.0 maps 1.0-1.10 to v1beta1 and
//     1.11 onwards to v1beta2 (0.3: v1alpha3, 0.4: v1alpha4);
//   - "v1beta2: compatible with v1beta1 (temporarily)", and "v1beta1 ...
//     in v1.16, April 2027 compatibility with the v1beta1 contract will be
//     considered EOL": a v1.11 to v1.15 core serves v1beta1 providers too,
//     a v1.16 core does not;
//   - clusterctl's GetCompatibleVersions (the code the operator runs through
//     its bundled clusterctl) adds v1beta1 to v1beta2 and nothing else.
//
// Newest first. When Cluster API publishes a new contract or ends a
// compatibility, this table is the one place to change.
var Contracts = []ContractPolicy{
	{Contract: "v1beta2", Since: Series{1, 11}, Compatible: []Compatibility{{Contract: "v1beta1", Until: Series{1, 16}}}},
	{Contract: "v1beta1", Since: Series{1, 0}},
	{Contract: "v1alpha4", Since: Series{0, 4}},
	{Contract: "v1alpha3", Since: Series{0, 3}},
}

// CoreContract is the contract a Cluster API core release implements,
// by the table; "" for a release older than the table.
func CoreContract(coreVersion string) string {
	s, ok := seriesOf(coreVersion)
	if !ok {
		return ""
	}
	for _, p := range Contracts {
		if !s.less(p.Since) {
			return p.Contract
		}
	}
	return ""
}

// Served lists the contracts a core release serves: the contract it
// implements (contract, from its own metadata.yaml; "" takes the
// table's) and the older ones the policy keeps compatible at its release
// series. A coreVersion that is not a version serves contract alone,
// with the compatibilities the policy gives without an end.
func Served(coreVersion, contract string) []string {
	s, ok := seriesOf(coreVersion)
	if contract == "" {
		contract = CoreContract(coreVersion)
	}
	if contract == "" {
		return nil
	}
	out := []string{contract}
	for _, p := range Contracts {
		if p.Contract != contract {
			continue
		}
		for _, c := range p.Compatible {
			if ok && !s.less(c.Until) {
				continue
			}
			if !slices.Contains(out, c.Contract) {
				out = append(out, c.Contract)
			}
		}
	}
	return out
}

// Serves says whether a core release (coreVersion implementing
// coreContract; "" takes the table's) serves a provider of contract.
func Serves(coreVersion, coreContract, contract string) bool {
	return slices.Contains(Served(coreVersion, coreContract), contract)
}

func seriesOf(v string) (Series, bool) {
	pv, err := version.ParseGeneric(v)
	if err != nil {
		return Series{}, false
	}
	return Series{pv.Major(), pv.Minor()}, true
}
