package admission

import (
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mode is what a verdict with problems does to the request.
type Mode string

// The modes.
const (
	// Enforce refuses the object; the message names the object, the rule
	// and the fix.
	Enforce Mode = "enforce"
	// Warn admits the object with AdmissionReview warnings (kubectl prints
	// them).
	Warn Mode = "warn"
	// Audit admits the object; the service logs and counts the verdict.
	Audit Mode = "audit"
)

// Modes lists the modes.
func Modes() []Mode { return []Mode{Enforce, Warn, Audit} }

// ParseMode reads a mode ("" is enforce).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Enforce, nil
	case Enforce, Warn, Audit:
		return Mode(s), nil
	}
	return "", fmt.Errorf("admission mode %q: use enforce, warn or audit", s)
}

// Lines are the verdict's problems, one line each, as kubectl prints them:
// the object, the rule, what is wrong and the fix.
func (v Verdict) Lines() []string {
	out := make([]string, 0, len(v.Problems))
	for _, p := range v.Problems {
		out = append(out, fmt.Sprintf("pinseal: %s: rule %s: %s; fix: %s", v.Object, p.Rule, p.Message, p.Fix))
	}
	return out
}

// Respond is the AdmissionReview answering req with v under mode.
func Respond(req *admissionv1.AdmissionRequest, v Verdict, mode Mode) *admissionv1.AdmissionReview {
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if req != nil {
		resp.UID = req.UID
	}
	if !v.Allowed() {
		switch mode {
		case Warn:
			resp.Warnings = v.Lines()
		case Audit:
		default:
			resp.Allowed = false
			resp.Result = &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusForbidden,
				Reason:  metav1.StatusReasonForbidden,
				Message: strings.Join(v.Lines(), "\n"),
			}
		}
	}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	}
}
