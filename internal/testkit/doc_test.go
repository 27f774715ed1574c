package testkit

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/pinseal/pinseal"

// goList runs `go list` with args and returns the module's packages it
// printed, as folders relative to the module root ("" for the root).
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	var dirs []string
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			dirs = append(dirs, "")
		} else if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			dirs = append(dirs, rel)
		}
	}
	return dirs
}

// architecture is the document whose "## Layout" section lists every
// folder of the module and the group it belongs to.
const architecture = "docs/architecture.md"

// Groups of the layout section.
const (
	shipped  = "shipped in the binaries"
	image    = "builds the release image"
	testOnly = "only for tests and benchmarks"
)

// readLayout reads the fenced block of the "## Layout" section of
// docs/architecture.md:
// each folder it names (the first column, "a, b, c" for several) and the
// group heading it stands under ("" after a blank line ends a group).
func readLayout(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../" + architecture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	folders := map[string]string{}
	section, fence, group := false, false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Layout"
			continue
		case !section:
			continue
		case strings.HasPrefix(line, "```"):
			fence = !fence
			group = ""
			continue
		case !fence:
			continue
		case line == "":
			group = ""
			continue
		case strings.HasPrefix(line, " "):
			continue // a description's second line
		case strings.HasSuffix(line, ":") && !strings.Contains(line, "  "):
			lower := strings.ToLower(line)
			group = "unknown heading " + line
			for _, g := range []string{shipped, image, testOnly} {
				if strings.HasPrefix(lower, g) {
					group = g
				}
			}
			continue
		}
		names, _, _ := strings.Cut(line, "  ")
		for _, n := range strings.Split(names, ", ") {
			n = strings.TrimSuffix(strings.TrimSpace(n), "/")
			if _, dup := folders[n]; dup {
				t.Errorf("%s: the layout names %s twice", architecture, n)
			}
			folders[n] = group
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(folders) == 0 {
		t.Fatalf(`%s has no "## Layout" section with a fenced folder list`, architecture)
	}
	return folders
}

// nearest is the folder of the layout that dir is, or is under.
func nearest(folders map[string]string, dir string) (string, bool) {
	for d := dir; d != "." && d != ""; d = path.Dir(d) {
		if _, ok := folders[d]; ok {
			return d, true
		}
	}
	return "", false
}

// TestNotInBinaries: the binaries link nothing from internal/testkit, and
// the layout in docs/architecture.md says truly which folders ship in the binaries and
// which only serve tests: every package under cmd/, pkg/ and internal/ is
// at or under a folder it names, every folder it names exists, and every
// package the binaries link is under a folder of a "Shipped in the
// binaries" group, none under an "Only for tests and benchmarks" one.
func TestNotInBinaries(t *testing.T) {
	linked := goList(t, "-deps", module+"/cmd/...")
	if len(linked) == 0 {
		t.Fatal("go list -deps found no package of the module in the binaries")
	}
	isLinked := map[string]bool{}
	for _, dir := range linked {
		isLinked[dir] = true
		if dir == "internal/testkit" || strings.HasPrefix(dir, "internal/testkit/") {
			t.Errorf("%s is linked into the binaries; test tooling belongs in tests only", dir)
		}
	}

	folders := readLayout(t)
	for dir, group := range folders {
		if fi, err := os.Stat("../../" + dir); err != nil || !fi.IsDir() {
			t.Errorf("%s: the layout names %s, which is no folder of the repository", architecture, dir)
		}
		if strings.HasPrefix(group, "unknown heading") {
			t.Errorf("%s: the layout puts %s under an %s (want one starting %q, %q or %q)", architecture, dir, group, "Shipped in the binaries", "Builds the release image", "Only for tests and benchmarks")
		}
	}
	checked := 0
	for _, dir := range goList(t, module+"/...") {
		if !strings.HasPrefix(dir, "cmd/") && !strings.HasPrefix(dir, "pkg/") && !strings.HasPrefix(dir, "internal/") {
			continue
		}
		checked++
		named, ok := nearest(folders, dir)
		if !ok {
			t.Errorf("%s: the layout names no folder %s is in; add it to the group it belongs to", architecture, dir)
			continue
		}
		switch group := folders[named]; {
		case isLinked[dir] && group != shipped:
			t.Errorf("%s is linked into the binaries, but the layout in %s lists %s under %q", dir, architecture, named, group)
		case !isLinked[dir] && group == shipped && (dir != named || !strings.HasPrefix(dir, "pkg/")):
			// A library folder no binary links is still the library, when
			// the layout names it; a folder under a shipped one is not.
			t.Errorf("%s is not linked into the binaries, but the layout in %s lists %s as shipped in them", dir, architecture, named)
		}
	}
	// The test-only folders the layout names outside cmd/, pkg/ and
	// internal/ (api/apitest) are not linked either.
	for dir, group := range folders {
		if group != testOnly {
			continue
		}
		for _, l := range linked {
			if l == dir || strings.HasPrefix(l, dir+"/") {
				t.Errorf("%s is linked into the binaries, but the layout in %s lists %s as only for tests", l, architecture, dir)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages under cmd/, pkg/ and internal/: go list did not see the module", checked)
	}
}
