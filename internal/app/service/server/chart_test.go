package server

import (
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
)

func TestFindingsChart(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 5, 1, 12, m, 0, 0, time.UTC) }
	// Newest first, as the store lists them; the failed scan has no counts.
	scans := []store.Scan{
		{ID: 4, Status: store.Succeeded, StartedAt: at(3), Errors: 0, Warnings: 2, Revision: "cccccccccccccccccccc"},
		{ID: 3, Status: store.Failed, StartedAt: at(2)},
		{ID: 2, Status: store.Succeeded, StartedAt: at(1), Errors: 4, Warnings: 1},
		{ID: 1, Status: store.Succeeded, StartedAt: at(0), Errors: 2, Warnings: 0},
	}
	c := newFindingsChart("g", scans)
	if c == nil || len(c.Points) != 3 {
		t.Fatalf("chart %+v, want 3 points (the failed scan left out)", c)
	}
	if c.Points[0].Scan != 1 || c.Points[2].Scan != 4 {
		t.Errorf("points %d..%d, want oldest (1) to newest (4)", c.Points[0].Scan, c.Points[2].Scan)
	}
	// The plot runs from x=plotL to chartW-plotR; 4 errors (the most) at
	// the top, 0 on the axis.
	if c.Errors != "40.0,76.0 334.0,12.0 628.0,140.0" {
		t.Errorf("error line %q", c.Errors)
	}
	if c.Warnings != "40.0,140.0 334.0,108.0 628.0,76.0" {
		t.Errorf("warning line %q", c.Warnings)
	}
	if got := c.Points[2].Title; got != "scan #4, 2026-05-01 12:03Z: 0 errors, 2 warnings at commit cccccccccccc" {
		t.Errorf("title %q", got)
	}
	var labels []string
	for _, tk := range c.Ticks {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, " ") != "0 2 4" {
		t.Errorf("ticks %v", labels)
	}

	one := newFindingsChart("g", scans[3:])
	if one == nil || one.Errors != "334.0,12.0" {
		t.Errorf("one scan: %+v, want one point in the middle", one)
	}
	if newFindingsChart("g", scans[1:2]) != nil || newFindingsChart("g", nil) != nil {
		t.Error("a chart for a source with no successful scan")
	}
}
