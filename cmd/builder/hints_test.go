package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// errorChecks lists the checks with error findings, as "check provider".
func errorChecks(r *report.Report) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity == report.Error {
			out = append(out, f.Check+" "+f.Provider)
		}
	}
	return out
}

func checkTree(t *testing.T, root string, opts verify.Options) *report.Report {
	t.Helper()
	_, r, err := verify.Run(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFixtureHintsWork: every command the verifier's hints give on the
// fixture trees works on the package as it stands, offline (an empty
// download cache): the dirty tree (the core's blob made by gzip without
// -n; the core has a pin.yaml, whose vendored files already hold their
// pinned bytes), and the clean tree with vendored YAMLs edited after their
// blobs were made in packages that pin no download (cpprovider; the
// two-provider bootstrap package). Hints that must fetch upstream bytes
// (re-vendoring a pinned file) need the network and are not run here.
func TestFixtureHintsWork(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // an empty download cache
	dirty := fixture.DirtyCopy(t)
	runHints(t, dirty, checkTree(t, dirty, verify.Options{}), verify.Options{})

	clean := fixture.CleanCopy(t)
	appendTo(t, filepath.Join(clean, "packages/system/capi-providers-cpprovider/files/control-plane-components.yaml"), "# edited\n")
	appendTo(t, filepath.Join(clean, "packages/system/capi-providers-bootstrap/files/talos-bootstrap-components.yaml"), "# edited\n")
	r := checkTree(t, clean, verify.Options{})
	if len(errorChecks(r)) < 2 {
		t.Fatalf("the edits planted no findings: %v", errorChecks(r))
	}
	runHints(t, clean, r, verify.Options{})

	// The verifier's synthetic monorepo (air-gap charts, charts that are
	// not provider packages, the talos YAML edited after its blob).
	mono, _ := fixture.Monorepo(t)
	runHints(t, mono, checkTree(t, mono, verify.Options{}), verify.Options{})
}

func appendTo(t *testing.T, file, s string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, s...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hintCommand is a command in backquotes in a hint.
var hintCommand = regexp.MustCompile("`([^`]+)`")

// runHints runs, each on a fresh copy of the tree at root, every command
// the report's hints give (builder commands in process, shell commands
// with sh), and checks that afterwards the finding it was about is gone
// (the tree checked again with opts).
func runHints(t *testing.T, root string, r *report.Report, opts verify.Options) {
	t.Helper()
	ran := 0
	for _, f := range r.Findings {
		for _, m := range hintCommand.FindAllStringSubmatch(f.Hint, -1) {
			cmdline := m[1]
			fields := strings.Fields(cmdline)
			if len(fields) == 0 || (fields[0] != "builder" && fields[0] != "cd") {
				continue
			}
			t.Run("hint "+cmdline, func(t *testing.T) {
				tree := filepath.Join(t.TempDir(), "tree")
				if err := fixture.CopyDir(root, tree); err != nil {
					t.Fatal(err)
				}
				if fields[0] == "builder" {
					t.Chdir(tree)
					if out, stderr, err := runBuildTestCmd(t, fields[1:]...); err != nil {
						t.Fatalf("%s: %v\n%s\n%s", cmdline, err, out, stderr)
					}
				} else {
					c := exec.Command("sh", "-c", cmdline)
					c.Dir = tree
					if out, err := c.CombinedOutput(); err != nil {
						t.Fatalf("%s: %v\n%s", cmdline, err, out)
					}
				}
				after := checkTree(t, tree, opts)
				for _, g := range after.Findings {
					if g.Check == f.Check && g.Package == f.Package && g.Provider == f.Provider && g.Severity == f.Severity {
						t.Fatalf("after `%s` the %s finding is still there: %s", cmdline, f.Check, g.Message)
					}
				}
			})
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("the report gives no command to run: the hint test would test nothing")
	}
}
