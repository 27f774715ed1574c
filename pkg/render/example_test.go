package render_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/pinseal/pinseal/pkg/render"
)

// A Sandbox renders a chart's templates in a bounded child process (the
// program itself: its main, here TestMain, calls render.MaybeRunChild
// first). A chart within the bounds renders; one whose template asks for
// more than the output bound is a problem naming it, and the caller goes
// on.
func ExampleSandbox_Render() {
	s := render.New(slog.New(slog.DiscardHandler))
	defer s.Close()
	lim := render.Limits{Timeout: 5 * time.Second, MaxOutput: 1 << 20, NoFastPath: true}
	chart := func(template string) render.Chart {
		return render.Chart{Namespace: "capi-system", Limits: lim, Files: []*loader.BufferedFile{
			{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: example\nversion: 0.1.0\n")},
			{Name: "templates/cm.yaml", Data: []byte(template)},
		}}
	}
	ok, prob := s.Render(context.Background(), chart("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\n"))
	fmt.Printf("rendered: %q, problem: %v\n", ok.Rendered["example/templates/cm.yaml"], prob != nil)
	_, prob = s.Render(context.Background(), chart(`data: {{ repeat 4000000 "a" }}`))
	fmt.Println("bomb:", prob.Check, prob.File, prob.Message)
	// Output:
	// rendered: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: example\n  namespace: capi-system\n", problem: false
	// bomb: package-load templates/cm.yaml the rendered output of the chart went over the render output limit of 1 MiB (4000006 bytes rendered, the largest from template templates/cm.yaml); rendering stopped
}
