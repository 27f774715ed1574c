package yamlbound

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"

	yaml "go.yaml.in/yaml/v3"
)

// laughs is the billion laughs: ten levels of ten aliases, 10^10 nodes
// from a few hundred bytes.
func laughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	return b.String()
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name string
		text string
		lim  Limits
		want Size   // when within the bounds
		err  string // else
	}{
		{"plain", "a: b\nc: [1, 2]\n", Limits{MaxNodes: 100}, Size{Nodes: 7, ScalarBytes: 5}, ""},
		{"alias expanded", "a: &x [1, 2]\nb: *x\n", Limits{MaxNodes: 100}, Size{Nodes: 9, ScalarBytes: 6}, ""},
		{"merge key expanded", "a: &x {k: v}\nb: {<<: *x, z: 1}\n", Limits{MaxNodes: 100}, Size{Nodes: 13, ScalarBytes: 10}, ""},
		{"two documents", "a: 1\n---\nb: 2\n", Limits{MaxNodes: 100}, Size{Nodes: 6, ScalarBytes: 4}, ""},
		{"billion laughs", laughs(), Limits{MaxNodes: 100000}, Size{}, "more than 100000 YAML nodes once its aliases are expanded (passed at line 5)"},
		{"long string named often", "s: &s " + strings.Repeat("y", 1000) + "\nl: [" + strings.TrimSuffix(strings.Repeat("*s,", 2000), ",") + "]\n",
			Limits{MaxScalarBytes: 1 << 20}, Size{}, "more than 1048576 bytes of YAML values"},
		{"many nodes, no alias", "[" + strings.Repeat("0,", 200) + "0]", Limits{MaxNodes: 100}, Size{}, "more than 100 YAML nodes"},
		{"unbounded", "l0: &l0 [x,x]\nl1: [*l0,*l0]\n", Limits{}, Size{Nodes: 13, ScalarBytes: 10}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A bound of the work, in CPU time (a busy machine stretches
			// wall-clock time, not this).
			var got Size
			var err error
			if used := timebound.Work(func() { got, err = Measure([]byte(tc.text), tc.lim) }); used > time.Second {
				t.Errorf("took %s of CPU", used)
			}
			if tc.err != "" {
				var be *Error
				if !errors.As(err, &be) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want an *Error saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Measure = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := Measure([]byte("a: [\n"), Limits{}); err == nil {
		t.Error("broken YAML measured")
	}
}

// TestBudget: several texts spend one budget; JSON is measured token by
// token.
func TestBudget(t *testing.T) {
	b := &Budget{Limits: Limits{MaxNodes: 10}}
	if err := b.Measure([]byte("a: [1, 2]\n")); err != nil || b.Used.Nodes != 5 {
		t.Fatalf("first: %v, used %+v", err, b.Used)
	}
	if err := b.MeasureJSON([]byte(`{"k": ["v", 1]}`)); err != nil || b.Used.Nodes != 10 {
		t.Fatalf("JSON: %v, used %+v", err, b.Used)
	}
	if err := b.Measure([]byte("x\n")); err == nil {
		t.Fatal("the budget was spent: one more node must pass it")
	}
}

// decodedSize counts the nodes of a decoded value as Measure counts them.
func decodedSize(v any) int64 {
	switch t := v.(type) {
	case map[string]any:
		n := int64(1)
		for _, e := range t {
			n += 1 + decodedSize(e)
		}
		return n
	case []any:
		n := int64(1)
		for _, e := range t {
			n += decodedSize(e)
		}
		return n
	}
	return 1
}

// FuzzMeasure: Measure never panics or hangs, and a text it finds within
// the bound decodes (into Go values, every alias expanded) to no more
// nodes than it counted.
func FuzzMeasure(f *testing.F) {
	for _, s := range []string{"a: b\n", laughs(), "a: &x {k: v}\nb: {<<: *x, z: 1}\n", "a: &a [*a]\n", "- &x 1\n- *x\n- *y\n", "{\"a\": [1, {\"b\": null}]}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const bound = 5000
		size, err := Measure(data, Limits{MaxNodes: bound})
		if err != nil {
			return
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		var total int64
		for {
			var v any
			if dec.Decode(&v) != nil {
				break
			}
			total += decodedSize(v)
		}
		if total > size.Nodes {
			t.Fatalf("decoded %d nodes, Measure counted %d", total, size.Nodes)
		}
	})
}
