package render

// Values schemas without reaching out. Helm validates a chart's values
// against its values.schema.json files (and its subcharts') with
// santhosh-tekuri/jsonschema and loaders that fetch http and https URLs
// and open any local file a "$ref" or "$schema" names
// (chartutil.ValidateAgainstSingleSchema, Helm v3.22): a chart could make
// the verifier connect anywhere, read /etc/passwd into a finding, or block
// for ever opening a FIFO under /proc. The loaders are built inside that
// function, so they cannot be replaced: pinseal composes the values with
// Helm's schema validation skipped and validates them itself, the same
// way, with a loader that reads nothing. References within a schema
// document ("#/$defs/x") and the JSON-schema metaschemas the library
// embeds resolve as before; a reference to any other document is refused
// with a finding naming the schema file and the reference, and the chart
// is not rendered (Helm would read it on the machine that installs the
// chart, so whether the values pass cannot be known here).

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/pinseal/pinseal/pkg/model"
)

// schemaRoot is the URL Helm gives every values.schema.json, so that
// relative references resolve as Helm resolves them (to file URLs).
const schemaRoot = "file:///values.schema.json"

// errRefRefused is what the loader answers for every document it is asked
// for.
var errRefRefused = errors.New("refused: pinseal reads no schema outside the values.schema.json that refers to it")

// refusingLoader is a jsonschema.URLLoader that loads nothing. urn:
// references get the permissive schema `true`, as Helm's own loader gives
// them (Helm v3.22 chartutil urnLoader) when no resolver is set; that
// touches nothing.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	if strings.HasPrefix(url, "urn:") {
		return true, nil
	}
	return nil, errRefRefused
}

// Values is chartutil.ToRenderValues without Helm's schema
// validation; when validate is set, the values are then validated against
// the chart's schemas as Helm would, with references refused
// (validateSchemas). files are the chart's files (to name a subchart's
// schema by its directory). A problem is returned instead of the values
// when they do not compose or do not validate.
func Values(chrt *chart.Chart, user map[string]any, opts chartutil.ReleaseOptions, validate bool, files []*loader.BufferedFile) (chartutil.Values, *model.Problem) {
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, user, opts, chartutil.DefaultCapabilities, true)
	if err != nil {
		return nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "values.yaml"},
			Message: fmt.Sprintf("the chart's default values do not render: %v", err)}
	}
	if !validate {
		return vals, nil
	}
	var values map[string]any
	switch v := vals["Values"].(type) {
	case chartutil.Values:
		values = v
	case map[string]any:
		values = v
	}
	if prob := validateSchemas(chrt, values, files); prob != nil {
		return nil, prob
	}
	return vals, nil
}

// validateSchemas validates values against the schema of chrt and, for
// each subchart that has values, the subchart's values against its schema,
// as chartutil.ValidateAgainstSchema does (same order, same message), but
// with every reference to another document refused.
func validateSchemas(chrt *chart.Chart, values map[string]any, files []*loader.BufferedFile) *model.Problem {
	var sb strings.Builder
	var refused *model.Problem
	top := chrt.ChartFullPath() + "/"
	var rec func(c *chart.Chart, vals map[string]any)
	rec = func(c *chart.Chart, vals map[string]any) {
		if refused != nil {
			return
		}
		if c.Schema != nil {
			ref, err := validateSchema(c.Schema, vals)
			if ref != "" {
				file := "values.schema.json"
				if c != chrt {
					file = SubchartPath(strings.TrimPrefix(c.ChartFullPath(), top)+"/values.schema.json", SubchartDirs(files))
				}
				refused = &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file},
					Message: fmt.Sprintf("%s refers to %q, another document: the verifier reads no schema but the chart's values.schema.json files (Helm would fetch or open it on the machine that installs the chart); the values were not checked and the chart was not rendered", file, ref),
					Hint:    "put the definitions into values.schema.json itself (under \"$defs\") and refer to them as \"#/$defs/NAME\""}
				return
			}
			if err != nil {
				fmt.Fprintf(&sb, "%s:\n%s", c.Name(), err.Error())
			}
		}
		for _, sub := range c.Dependencies() {
			raw, ok := vals[sub.Name()]
			if !ok || raw == nil {
				continue
			}
			sv, ok := raw.(map[string]any)
			if !ok {
				fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
				continue
			}
			rec(sub, sv)
		}
	}
	rec(chrt, values)
	if refused != nil {
		return refused
	}
	if sb.Len() > 0 {
		return &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "values.yaml"},
			Message: "the chart's default values do not render: values don't meet the specifications of the schema(s) in the following chart(s):\n" + sb.String()}
	}
	return nil
}

// validateSchema validates values against one schema document. ref is the
// reference refused, if the schema needed another document; err is what
// did not validate (or why the schema does not compile), worded as Helm
// words it.
func validateSchema(schemaJSON []byte, values map[string]any) (ref string, err error) {
	defer func() {
		if r := recover(); r != nil { // as Helm does
			err = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return "", err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(schemaRoot, doc); err != nil {
		return "", err
	}
	sch, err := c.Compile(schemaRoot)
	if err != nil {
		var le *jsonschema.LoadURLError
		if errors.As(err, &le) && errors.Is(le.Err, errRefRefused) {
			return le.URL, nil
		}
		return "", err
	}
	if values == nil {
		values = map[string]any{}
	}
	if err := sch.Validate(map[string]any(values)); err != nil {
		// As Helm's JSONSchemaValidationError words it.
		return "", errors.New(strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaRoot+"#'\n") + "\n")
	}
	return "", nil
}
