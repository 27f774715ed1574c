package check

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/atomicfile"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the checks table of docs/verifier.md from the catalog (make readme)")

// The documented checks table (docs/verifier.md, "Checks") stands between
// these markers and is WriteMarkdown's output, nothing else.
const (
	checksDoc   = "../../docs/verifier.md"
	readmeBegin = "<!-- checks:begin (generated from the catalog by `make readme`; do not edit) -->\n"
	readmeEnd   = "<!-- checks:end -->\n"
)

// TestREADMEChecksTable: the checks table of docs/verifier.md (linked from
// the README) is the catalog's. With -update-readme (make readme) it
// rewrites the table instead.
func TestREADMEChecksTable(t *testing.T) {
	data, err := os.ReadFile(checksDoc)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	got, before, after, err := readmeTable(data)
	if err != nil {
		t.Fatalf("%s: %v", checksDoc, err)
	}
	if got == want.String() {
		return
	}
	if *updateREADME {
		out := before + readmeBegin + want.String() + readmeEnd + after
		if err := atomicfile.WriteFile(checksDoc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the checks table of %s", checksDoc)
		return
	}
	t.Errorf("the checks table of %s is not the catalog's (pkg/check/check.go); run `make readme` to write it. The table should be:\n%s", strings.TrimPrefix(checksDoc, "../../"), want.String())
}

// readmeTable splits a document at the checks table's markers.
func readmeTable(data []byte) (table, before, after string, err error) {
	s := string(data)
	before, rest, ok := strings.Cut(s, readmeBegin)
	if !ok {
		return "", "", "", errMarker(readmeBegin)
	}
	table, after, ok = strings.Cut(rest, readmeEnd)
	if !ok {
		return "", "", "", errMarker(readmeEnd)
	}
	return table, before, after, nil
}

type errMarker string

func (e errMarker) Error() string {
	return "no line " + strings.TrimSpace(string(e)) + " around the checks table"
}

func TestReadmeTableMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"both", "a\n" + readmeBegin + "| t |\n" + readmeEnd + "b\n", "| t |\n", true},
		{"no begin", "a\n| t |\n" + readmeEnd, "", false},
		{"no end", readmeBegin + "| t |\n", "", false},
	} {
		table, _, _, err := readmeTable([]byte(tc.doc))
		if (err == nil) != tc.ok || table != tc.want {
			t.Errorf("%s: %q, %v", tc.name, table, err)
		}
	}
}
