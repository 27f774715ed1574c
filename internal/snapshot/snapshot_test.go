package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"testing"
	"time"
)

type item struct {
	Name string
	N    int
}

type part struct {
	Item  *item
	Items []item
	Map   map[string]*item
}

type whole struct {
	Items    []item
	Parts    []*part
	First    *item // into Items
	Shared   *part // one of Parts
	Self     *whole
	Nil      []string
	Empty    []string
	NilMap   map[string]int
	EmptyMap map[string]int
	Err      error
	Wrapped  error
	EOF      error
	When     time.Time
	Bytes    []byte
	Digest   [4]byte
	Any      any
	hidden   string
	F        func()
	Float    float64
	Bool     bool
	U8       uint8
}

func init() { Register([]string(nil), &[]*part{}) }

func sample() *whole {
	w := &whole{Items: []item{{"a", 1}, {"b", 2}, {"c", 3}}, Empty: []string{}, EmptyMap: map[string]int{},
		Err: errors.New("plain"), Wrapped: fmt.Errorf("wrapped: %w", &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}),
		EOF: io.EOF, When: time.Unix(1700000000, 5).UTC(), Bytes: []byte("raw"), Digest: [4]byte{1, 2, 3, 4},
		Any: []string{"x"}, hidden: "kept", Float: 2.5, Bool: true, U8: 7}
	shared := &item{"s", 9}
	p1 := &part{Item: shared, Items: []item{{"p", 0}}, Map: map[string]*item{"s": shared, "z": {"z", 26}}}
	p2 := &part{Item: &p1.Items[0]}
	w.Parts = []*part{p1, p2, p1}
	w.First = &w.Items[1]
	w.Shared = p2
	w.Self = w
	return w
}

func roundTrip(t *testing.T, w *whole) *whole {
	t.Helper()
	b, err := Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	var got whole
	if err := Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// TestRoundTrip: values, nil and empty, errors and time come back equal,
// and every pointer shares what it shared.
func TestRoundTrip(t *testing.T) {
	w := sample()
	got := roundTrip(t, w)
	if !reflect.DeepEqual(w, got) {
		t.Fatalf("round trip differs:\n%+v\n%+v", w, got)
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"First points into Items", got.First == &got.Items[1]},
		{"Parts[0] and Parts[2] are one", got.Parts[0] == got.Parts[2]},
		{"Shared is Parts[1]", got.Shared == got.Parts[1]},
		{"the map shares the item", got.Parts[0].Map["s"] == got.Parts[0].Item},
		{"a pointer into another part's slice", got.Parts[1].Item == &got.Parts[0].Items[0]},
		{"a cycle", got.Self == got},
		{"a sentinel stays itself", got.EOF == io.EOF},
		{"a wrapped sentinel is still found", errors.Is(got.Wrapped, fs.ErrNotExist)},
		{"nil stays nil", got.Nil == nil && got.NilMap == nil},
		{"empty stays empty", got.Empty != nil && got.EmptyMap != nil},
	} {
		if !c.ok {
			t.Errorf("%s: not after the round trip", c.name)
		}
	}
}

// TestRefused: what cannot be kept is an error, not a silent loss.
func TestRefused(t *testing.T) {
	type unregistered struct{ A int }
	for name, w := range map[string]*whole{
		"func":                 {F: func() {}},
		"unregistered":         {Any: unregistered{1}},
		"pointer into a field": func() *whole { w := &whole{Parts: []*part{{}}}; w.Self = w; w.Any = &w.Parts; return w }(),
	} {
		if _, err := Encode(w); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// TestCorrupt: every cut and every changed byte of a snapshot is an error
// or a value, never a panic.
func TestCorrupt(t *testing.T) {
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		var w whole
		if err := Decode(b[:i], &w); err == nil {
			t.Fatalf("cut at %d of %d: no error", i, len(b))
		}
		c := append([]byte(nil), b...)
		c[i] ^= 0xff
		_ = Decode(c, &w)
	}
}

func FuzzDecode(f *testing.F) {
	b, err := Encode(sample())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var w whole
		_ = Decode(data, &w)
	})
}

// TestDeep: a chain nested past maxDepth is an error, not a stack
// exhausted.
func TestDeep(t *testing.T) {
	type chain struct{ Next *chain }
	b := []byte(magic)
	for range maxDepth + 10 {
		b = append(b, tagNew)
	}
	var c chain
	if err := Decode(b, &c); err == nil {
		t.Fatal("no error")
	}
}
