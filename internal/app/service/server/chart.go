package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pinseal/pinseal/internal/app/service/store"
)

// chartScans is how many of a source's latest scans its chart shows.
const chartScans = 30

// The chart's size in SVG user units, and its plot area inside.
const (
	chartW, chartH                = 640, 170
	plotL, plotR, plotT, plotB    = 40, 12, 12, 30
	plotW, plotH                  = chartW - plotL - plotR, chartH - plotT - plotB
	chartPointR                   = 3.5
	chartErrors, chartWarnings    = "#cf222e", "#9a6700"
	chartGrid, chartAxisLabelSize = "#d0d7de", 11
)

// findingsChart is one source's error and warning findings over its latest
// successful scans, laid out for the "chart" template: an SVG drawn on the
// server, with a link and a tooltip (<title>) per scan and no script.
type findingsChart struct {
	Source               string
	W, H                 int
	Errors, Warnings     string // polyline points, oldest scan first
	Points               []chartPoint
	Ticks                []chartTick
	First, Last          string // times of the oldest and newest scan shown
	FirstX, LastX, AxisY float64
	ErrColor, WarnColor  string
	GridColor            string
	LabelSize, PointR    float64
	PlotL, PlotR         float64 // the plot area's left and right edges
}

type chartPoint struct {
	Scan           int64
	X, YErr, YWarn float64
	Title          string
}

type chartTick struct {
	Y     float64
	Label string
}

// sourceCharts are the charts of the sources in infos, in their order;
// a source with no successful scan has none.
func (s *Server) sourceCharts(ctx context.Context, infos []sourceInfo) ([]*findingsChart, error) {
	var out []*findingsChart
	for _, si := range infos {
		scans, err := s.store.Scans(ctx, si.Name, chartScans)
		if err != nil {
			return nil, err
		}
		if c := newFindingsChart(si.Name, scans); c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// newFindingsChart lays out the successful scans among scans (newest
// first, as the store lists them); nil when there is none. Scans are
// spaced evenly, oldest on the left: the chart is about the sequence of
// scans (each a commit, for a git source), not the gaps between them.
func newFindingsChart(source string, scans []store.Scan) *findingsChart {
	var ok []store.Scan
	for _, sc := range scans {
		if sc.Status == store.Succeeded {
			ok = append(ok, sc)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.Reverse(ok)
	top := 1
	for _, sc := range ok {
		top = max(top, sc.Errors, sc.Warnings)
	}
	c := &findingsChart{
		Source: source, W: chartW, H: chartH, AxisY: plotT + plotH,
		ErrColor: chartErrors, WarnColor: chartWarnings, GridColor: chartGrid,
		LabelSize: chartAxisLabelSize, PointR: chartPointR, PlotL: plotL, PlotR: chartW - plotR,
		First: ok[0].StartedAt.UTC().Format("2006-01-02 15:04Z"),
		Last:  ok[len(ok)-1].StartedAt.UTC().Format("2006-01-02 15:04Z"),
	}
	y := func(v int) float64 { return plotT + plotH - float64(v)/float64(top)*plotH }
	var errs, warns []string
	for i, sc := range ok {
		x := float64(plotL) + float64(plotW)/2
		if len(ok) > 1 {
			x = float64(plotL) + float64(i)*float64(plotW)/float64(len(ok)-1)
		}
		p := chartPoint{Scan: sc.ID, X: x, YErr: y(sc.Errors), YWarn: y(sc.Warnings)}
		p.Title = fmt.Sprintf("scan #%d, %s: %d errors, %d warnings", sc.ID, sc.StartedAt.UTC().Format("2006-01-02 15:04Z"), sc.Errors, sc.Warnings)
		if sc.Revision != "" {
			p.Title += " at commit " + short(sc.Revision)
		}
		c.Points = append(c.Points, p)
		errs = append(errs, coord(x, p.YErr))
		warns = append(warns, coord(x, p.YWarn))
	}
	c.Errors, c.Warnings = strings.Join(errs, " "), strings.Join(warns, " ")
	c.FirstX, c.LastX = c.Points[0].X, c.Points[len(c.Points)-1].X
	for _, v := range slices.Compact([]int{0, top / 2, top}) {
		c.Ticks = append(c.Ticks, chartTick{Y: y(v), Label: strconv.Itoa(v)})
	}
	return c
}

func coord(x, y float64) string {
	return strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(y, 'f', 1, 64)
}
