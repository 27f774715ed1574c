package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/servertest"
)

// recordingTB captures Errorf so that a test can see the validator fail.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Helper() {}

// The validation every test relies on must be able to fail.
func TestResponseValidationIsStrict(t *testing.T) {
	okReport := `{"schemaVersion":"pinseal.report/v1","tool":{"name":"verifier","version":"v1"},"findings":[],"packages":[],"summary":{"packages":0,"providers":0,"errors":0,"warnings":0,"waived":0,"passed":true}}`
	okScan := `{"id":1,"source":"tree","triggeredBy":"api","status":"succeeded","startedAt":"2025-01-01T00:00:00Z","errors":0,"warnings":0}`
	tests := []struct {
		name, method, path string
		status             int
		contentType, body  string
		wantOK             bool
	}{
		{"valid report", "POST", "/v1/verify", 200, "application/json", okReport, true},
		{"report without summary", "POST", "/v1/verify", 200, "application/json", strings.Replace(okReport, `,"summary":{"packages":0,"providers":0,"errors":0,"warnings":0,"waived":0,"passed":true}`, "", 1), false},
		{"report of another schema version", "POST", "/v1/verify", 200, "application/json", strings.Replace(okReport, "pinseal.report/v1", "pinseal.report/v0", 1), false},
		{"finding with unknown field", "POST", "/v1/verify", 200, "application/json", strings.Replace(okReport, `"findings":[]`, `"findings":[{"check":"blob-yaml","severity":"error","package":"p","message":"m","colour":"red"}]`, 1), false},
		{"undocumented status", "POST", "/v1/verify", 418, "application/json", `{"error":"x"}`, true /* default response */},
		{"valid scan detail", "GET", "/v1/scans/1", 200, "application/json", `{"scan":` + okScan + `,"report":null,"new":[],"resolved":[]}`, true},
		{"scan with a bad status", "GET", "/v1/scans/1", 200, "application/json", `{"scan":` + strings.Replace(okScan, "succeeded", "done", 1) + `,"report":null,"new":[],"resolved":[]}`, false},
		{"tracked finding missing firstSeen", "GET", "/v1/findings", 200, "application/json", `{"findings":[{"key":"k","source":"s","finding":{"check":"a","severity":"error","package":"p","message":"m"},"lastSeen":"2025-01-01T00:00:00Z","firstScan":1,"lastScan":1}]}`, false},
		{"error without message", "GET", "/v1/scans/1", 404, "application/json", `{}`, false},
		{"html where JSON is documented", "GET", "/v1/sources", 200, "text/html", `<p>`, false},
		{"webhook event", "", "WebhookEvent", 0, "", `{"event":"scan.new-error-findings","source":"s","scan":` + okScan + `,"findings":[]}`, true},
		{"webhook event, other name", "", "WebhookEvent", 0, "", `{"event":"scan.done","source":"s","scan":` + okScan + `,"findings":[]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.method == "" {
				rec := &recordingTB{TB: t}
				servertest.ValidateSchema(rec, tt.path, []byte(tt.body))
				if ok := len(rec.errs) == 0; ok != tt.wantOK {
					t.Fatalf("valid=%v, want %v; errors: %v", ok, tt.wantOK, rec.errs)
				}
				return
			}
			req, _ := http.NewRequest(tt.method, "http://127.0.0.1"+tt.path, nil)
			resp := &http.Response{StatusCode: tt.status, Header: http.Header{"Content-Type": {tt.contentType}}, Body: io.NopCloser(strings.NewReader(""))}
			rec := &recordingTB{TB: t}
			servertest.ValidateResponse(rec, req, resp, []byte(tt.body))
			if ok := len(rec.errs) == 0; ok != tt.wantOK {
				t.Fatalf("valid=%v, want %v; errors: %v", ok, tt.wantOK, rec.errs)
			}
		})
	}
}
