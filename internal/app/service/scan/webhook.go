package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
)

// Webhook POSTs a JSON event to one URL, the one the configuration names (it
// never follows redirects, so it reaches no other address), when a scan finds
// new error findings.
type Webhook struct {
	url    string
	host   string // what errors name: webhook URLs often carry a secret in their path
	client *http.Client
}

// NewWebhook returns a webhook for url with a bound on each call.
func NewWebhook(rawURL string, timeout time.Duration) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook URL must be an absolute http or https URL")
	}
	return &Webhook{url: rawURL, host: u.Scheme + "://" + u.Host, client: &http.Client{
		Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}, nil
}

// Event is the webhook's JSON body (api/openapi.yaml, webhooks.newErrorFindings).
type Event struct {
	Event    string          `json:"event"` // "scan.new-error-findings"
	Source   string          `json:"source"`
	Scan     store.Scan      `json:"scan"`
	Findings []store.Finding `json:"findings"` // the new error findings
}

// EventNewErrors names the event.
const EventNewErrors = "scan.new-error-findings"

// Notify sends the event; any status other than 2xx is an error.
func (w *Webhook) Notify(ctx context.Context, sc store.Scan, news []store.Finding) error {
	body, err := json.Marshal(Event{Event: EventNewErrors, Source: sc.Source, Scan: sc, Findings: news})
	if err != nil {
		return fmt.Errorf("encode webhook event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook request to %s: %w", w.host, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pinseal-verifier")
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL
		}
		return fmt.Errorf("webhook POST %s: %w", w.host, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook POST %s: status %s", w.host, resp.Status)
	}
	return nil
}
