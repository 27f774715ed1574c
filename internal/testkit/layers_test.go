package testkit

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The floors of the house, bottom to top (docs/architecture.md, "Layers").
const (
	features = "internal/app/" // what the commands and the service do: above the library
	library  = "pkg/"
)

// libraryData are the library's packages of data types: the foundations
// read files into them, so a foundation may import these and no other
// package of the library.
var libraryData = []string{"pkg/pin", "pkg/blob", "pkg/report", "pkg/model"}

// isFoundation: a package under internal/ that is no feature, test tooling
// or the release image's builder.
func isFoundation(dir string) bool {
	return strings.HasPrefix(dir, "internal/") && !strings.HasPrefix(dir, features) &&
		dir != "internal/testkit" && !strings.HasPrefix(dir, "internal/testkit/") &&
		dir != "internal/ociimage" && !strings.HasPrefix(dir, "internal/ociimage/")
}

// layerViolations returns an arrow of imports (package folder -> the
// module's folders it imports) that runs up a floor: the library or a
// foundation importing a feature, a foundation importing the library
// beyond its data types. A library package's tests count as the library
// (their key is the folder with a " (tests)" suffix): a test of the
// library that needs a feature belongs beside the feature.
func layerViolations(imports map[string][]string) []string {
	var bad []string
	for from, tos := range imports {
		for _, to := range tos {
			switch {
			case strings.HasPrefix(to, features) && (strings.HasPrefix(from, library) || isFoundation(from)):
				bad = append(bad, from+" -> "+to+": a feature above the library; move what both need down into a foundation (internal/) or the library")
			case isFoundation(from) && strings.HasPrefix(to, library) && !slices.Contains(libraryData, to):
				bad = append(bad, from+" -> "+to+": a foundation imports only the library's data types ("+strings.Join(libraryData, ", ")+"); move it up into the library or a feature")
			}
		}
	}
	slices.Sort(bad)
	return bad
}

func TestLayerViolations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{"clean", map[string][]string{
			"pkg/verify":         {"pkg/remote", "internal/layout", "pkg/model"},
			"internal/layout":    {"pkg/model", "pkg/pin", "internal/yamldoc"},
			"internal/app/plan":  {"pkg/bump", "internal/app/outdated", "internal/patch"},
			"internal/testkit/x": {"internal/app/service/server", "pkg/load"},
			"cmd/builder":        {"internal/app/add", "pkg/build"},
		}, 0},
		{"library imports a feature", map[string][]string{"pkg/build": {"internal/app/relocate"}}, 1},
		{"library's test imports a feature", map[string][]string{"pkg/bump" + tests: {"internal/app/relocate"}}, 1},
		{"foundation imports a feature", map[string][]string{"internal/images": {"internal/app/relocate"}}, 1},
		{"foundation imports the library", map[string][]string{"internal/layout": {"pkg/model", "pkg/load"}}, 1},
	} {
		if got := layerViolations(tc.imports); len(got) != tc.want {
			t.Errorf("%s: %d violations %v, want %d", tc.name, len(got), got, tc.want)
		}
	}
}

// TestLayers: the house reads top to bottom. cmd/ and the features
// (internal/app/) stand on the library (pkg/), the library on the
// foundations (internal/), and no import runs back up.
func TestLayers(t *testing.T) {
	imports := moduleImports(t, "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}")
	if len(imports) < 20 || len(imports["pkg/verify"]) == 0 {
		t.Fatalf("go list saw %d packages of the module: it did not see the module", len(imports))
	}
	// The library's tests stand on the same floor as the library.
	for from, tos := range moduleImports(t, "{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}") {
		if strings.HasPrefix(from, library) && len(tos) > 0 {
			imports[from+tests] = tos
		}
	}
	for _, v := range layerViolations(imports) {
		t.Error(v)
	}
}

// tests marks the key of a package's tests in an imports map.
const tests = " (tests)"

// moduleImports lists, by go list -f format, each package of the module
// (its folder) with the module's folders it names.
func moduleImports(t *testing.T, format string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue
		}
		imports[from] = nil
		for _, to := range fields[1:] {
			if rel, ok := strings.CutPrefix(to, module+"/"); ok && !slices.Contains(imports[from], rel) {
				imports[from] = append(imports[from], rel)
			}
		}
	}
	return imports
}
