package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Rule describes a check for rule lists (SARIF tool.driver.rules).
type Rule struct {
	ID          string
	Title       string
	Description string
	Severity    Severity // default severity
}

// SARIF 2.1.0 constants.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	// InformationURI is where the tool is described.
	InformationURI = "https://github.com/pinseal/pinseal"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
	// Invocations carry the skipped charts as notifications when nothing
	// was checked (SARIF 2.1.0 §3.20.21 toolExecutionNotifications).
	Invocations []sarifInvocation `json:"invocations,omitempty"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

// skipInvocations are the skipped charts of a report that checked no
// package, as one invocation's notifications; nil otherwise.
func skipInvocations(r *Report) []sarifInvocation {
	if r.Summary.Packages > 0 {
		return nil
	}
	inv := sarifInvocation{ExecutionSuccessful: false, Notifications: []sarifNotification{{Level: "error",
		Message: sarifText{Text: "no provider package was checked"}}}}
	for _, sk := range r.Skipped {
		inv.Notifications = append(inv.Notifications, sarifNotification{Level: "note",
			Message: sarifText{Text: "skipped " + sk.Path + ": " + sk.Reason}})
	}
	return []sarifInvocation{inv}
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Help                 sarifText       `json:"help"`
	Properties           map[string]any  `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]string  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// ruleName turns "blob-yaml" into "BlobYaml".
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// uriOf makes a root-relative slash path a relative URI reference.
func uriOf(p string) string {
	return (&url.URL{Path: p}).String()
}

// Fingerprint identifies a finding across runs: check, package, provider
// and file (not the message, which carries digests and line numbers).
func (f Finding) Fingerprint() string {
	h := sha256.Sum256([]byte(f.Check + "\x00" + f.Package + "\x00" + f.Provider + "\x00" + f.File))
	return hex.EncodeToString(h[:16])
}

// WriteSARIF writes the report as SARIF 2.1.0. rules (the check catalog)
// become tool.driver.rules; a finding whose check has no rule gets one.
// Waived findings carry an accepted external suppression.
func WriteSARIF(w io.Writer, r *Report, rules []Rule) error {
	r = r.normalized()
	rs := &sarifRules{index: map[string]int{}}
	for _, ru := range rules {
		rs.add(ru)
	}
	results := make([]sarifResult, 0, len(r.Findings))
	for _, f := range r.Findings {
		rs.add(Rule{ID: f.Check})
		results = append(results, sarifResultOf(f, rs.index[f.Check]))
	}
	if rs.rules == nil {
		rs.rules = []sarifRule{}
	}
	log := sarifLog{
		Schema:  SARIFSchema,
		Version: SARIFVersion,
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           r.Tool.Name,
				Version:        r.Tool.Version,
				InformationURI: InformationURI,
				Rules:          rs.rules,
			}},
			Results:     results,
			Invocations: skipInvocations(r),
		}},
	}
	if log.Runs[0].Tool.Driver.Name == "" {
		log.Runs[0].Tool.Driver.Name = "pinseal"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("write SARIF report: %w", err)
	}
	return nil
}

// sarifRules is the run's rule list, each rule once, with its index.
type sarifRules struct {
	index map[string]int
	rules []sarifRule
}

func (rs *sarifRules) add(ru Rule) {
	if _, ok := rs.index[ru.ID]; ok {
		return
	}
	title, desc := ru.Title, ru.Description
	if title == "" {
		title = ru.ID
	}
	if desc == "" {
		desc = title
	}
	sev := ru.Severity
	if sev == "" {
		sev = Error
	}
	rs.index[ru.ID] = len(rs.rules)
	rs.rules = append(rs.rules, sarifRule{
		ID:                   ru.ID,
		Name:                 ruleName(ru.ID),
		ShortDescription:     sarifText{title},
		FullDescription:      sarifText{desc},
		DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(sev)},
		Help:                 sarifText{desc},
		Properties:           map[string]any{"tags": []string{"supply-chain", "cluster-api"}},
	})
}

// sarifResultOf is one finding as a SARIF result of the rule at ruleIndex.
func sarifResultOf(f Finding, ruleIndex int) sarifResult {
	text := f.Message
	if f.Hint != "" {
		text += "\nWhat to do: " + f.Hint
	}
	res := sarifResult{
		RuleID:              f.Check,
		RuleIndex:           ruleIndex,
		Level:               sarifLevel(f.Severity),
		Message:             sarifText{text},
		PartialFingerprints: map[string]string{"pinsealFinding/v1": f.Fingerprint()},
		Properties:          map[string]string{},
	}
	where := f.File
	if where == "" {
		where = f.Package
	}
	if where != "" {
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uriOf(where)}}}
		if f.Line > 0 && f.File != "" {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
		}
		res.Locations = []sarifLocation{loc}
	}
	if f.Waiver != nil {
		res.Suppressions = []sarifSuppression{{
			Kind:          "external",
			Status:        "accepted",
			Justification: fmt.Sprintf("%s (waiver expires %s)", f.Waiver.Reason, f.Waiver.Expires),
		}}
	}
	for k, v := range map[string]string{"package": f.Package, "provider": f.Provider, "hint": f.Hint, "detail": f.Detail} {
		if v != "" {
			res.Properties[k] = v
		}
	}
	if len(res.Properties) == 0 {
		res.Properties = nil
	}
	return res
}
