package snapshot

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
)

// Tags of a pointer, slice, map or interface in the stream.
const (
	tagNil = iota
	tagNew
	tagRef      // a pointer to a target written before: its number
	tagInterior // a pointer into a slice: the slice's number and the index
	tagSentinel // an interface holding a registered sentinel error
)

// target is what a pointer points to.
type target struct {
	addr uintptr
	t    reflect.Type
}

// array is the storage of a slice.
type array struct {
	base uintptr
	n    int
	elem reflect.Type
	end  uintptr // base + n * elem size
	id   int     // number of a slice pointers point into; -1 when none does
}

// graph is what the first pass finds: every pointer target and the
// storage of every slice.
type graph struct {
	targets  []target
	seen     map[target]bool
	arrays   []*array
	arrayAt  map[target]*array // by base and element type
	interior map[target][2]int // pointers into a slice: its number and the index
	err      error
}

// Encode writes the graph of values v points to (v must be a non-nil
// pointer). It fails on a value it cannot keep (see the package comment).
func Encode(v any) (data []byte, err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("snapshot: Encode needs a non-nil pointer, got %T", v)
	}
	g := &graph{seen: map[target]bool{}, arrayAt: map[target]*array{}, interior: map[target][2]int{}}
	g.scan(rv)
	if g.err != nil {
		return nil, fmt.Errorf("snapshot: %w", g.err)
	}
	if err := g.classify(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	e := &encoder{g: g, ids: map[target]int{}, buf: []byte(magic)}
	e.value(rv)
	if e.err != nil {
		return nil, fmt.Errorf("snapshot: %w", e.err)
	}
	return e.buf, nil
}

// scan records the pointer targets and slice storage under v.
func (g *graph) scan(v reflect.Value) {
	if g.err != nil || !walks(v.Type()) {
		return
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if t.Elem().Size() > 0 {
			k := target{v.Pointer(), t.Elem()}
			if g.seen[k] {
				return
			}
			g.seen[k] = true
			g.targets = append(g.targets, k)
		}
		g.scan(v.Elem())
	case reflect.Slice:
		if v.IsNil() || v.Len() == 0 {
			return
		}
		if et := t.Elem(); et.Size() > 0 {
			k := target{v.Pointer(), et}
			if a := g.arrayAt[k]; a == nil || a.n < v.Len() {
				a = &array{base: k.addr, n: v.Len(), elem: et, end: k.addr + uintptr(v.Len())*et.Size(), id: -1}
				g.arrayAt[k] = a
				g.arrays = append(g.arrays, a)
			}
		}
		if walks(t.Elem()) {
			for i := range v.Len() {
				g.scan(v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			g.scan(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			g.scan(settable(v.Field(i)))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for it := v.MapRange(); it.Next(); {
			g.scan(addressableCopy(it.Key()))
			g.scan(addressableCopy(it.Value()))
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		c := v.Elem()
		if sentinelIndex(c) >= 0 {
			return
		}
		if _, ok := lookupType(typeName(c.Type())); !ok {
			g.err = fmt.Errorf("an interface holds %s, which is not registered (snapshot.Register)", c.Type())
			return
		}
		g.scan(addressableCopy(c))
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !v.IsNil() {
			g.err = fmt.Errorf("a %s cannot be kept", t)
		}
	}
}

// classify decides how each pointer is written: into a slice (its number
// and index) or to a target of its own; a pointer into part of another
// target or of a slice's element, or into storage two different slices
// share, cannot be kept.
func (g *graph) classify() error {
	arrs := g.arrays
	sort.Slice(arrs, func(i, j int) bool { return arrs[i].base < arrs[j].base })
	maxEnd := make([]uintptr, len(arrs)) // the furthest end of arrs[:i+1]
	for i, a := range arrs {
		maxEnd[i] = a.end
		if i > 0 {
			maxEnd[i] = max(maxEnd[i], maxEnd[i-1])
		}
	}
	var own []target
	next := 0
	for _, k := range g.targets {
		size := k.t.Size()
		var in []*array
		for i := sort.Search(len(arrs), func(i int) bool { return arrs[i].base > k.addr }) - 1; i >= 0 && maxEnd[i] > k.addr; i-- {
			if a := arrs[i]; a.base <= k.addr && k.addr < a.end {
				in = append(in, a)
			}
		}
		if len(in) == 0 {
			own = append(own, k)
			continue
		}
		a := in[0]
		for _, b := range in[1:] {
			if b.base != a.base || b.end != a.end {
				return fmt.Errorf("a %s is pointed to inside storage that slices of different lengths share", k.t)
			}
		}
		if a.elem != k.t || (k.addr-a.base)%size != 0 {
			return fmt.Errorf("a pointer to %s points into an element of a []%s", k.t, a.elem)
		}
		if a.id < 0 {
			a.id = next
			next++
		}
		g.interior[k] = [2]int{a.id, int((k.addr - a.base) / size)}
	}
	slices.SortFunc(own, func(a, b target) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	for i := 1; i < len(own); i++ {
		if prev := own[i-1]; prev.addr+prev.t.Size() > own[i].addr {
			return fmt.Errorf("a pointer to %s points into a %s another pointer points to", own[i].t, prev.t)
		}
	}
	return nil
}

// arrayID is the number of v's storage (a slice) when pointers point into
// it, else -1.
func (g *graph) arrayID(v reflect.Value) int {
	if a := g.arrayAt[target{v.Pointer(), v.Type().Elem()}]; a != nil && a.n == v.Len() {
		return a.id
	}
	return -1
}

type encoder struct {
	g   *graph
	ids map[target]int // targets written, by number
	buf []byte
	err error
}

func (e *encoder) uint(u uint64) { e.buf = binary.AppendUvarint(e.buf, u) }
func (e *encoder) int(i int64)   { e.buf = binary.AppendVarint(e.buf, i) }
func (e *encoder) bytes(b []byte) {
	e.uint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// value writes v, which is addressable.
func (e *encoder) value(v reflect.Value) {
	if e.err != nil {
		return
	}
	t := v.Type()
	if byMarshal(t) {
		b, err := v.Interface().(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			e.err = fmt.Errorf("%s: %w", t, err)
			return
		}
		e.bytes(b)
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		if v.Bool() {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		e.uint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		e.uint(math.Float64bits(real(c)))
		e.uint(math.Float64bits(imag(c)))
	case reflect.String:
		e.uint(uint64(v.Len()))
		e.buf = append(e.buf, v.String()...)
	case reflect.Pointer:
		e.pointer(v)
	case reflect.Slice:
		e.slice(v)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			e.buf = append(e.buf, v.Bytes()...)
			return
		}
		for i := range v.Len() {
			e.value(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			e.value(settable(v.Field(i)))
		}
	case reflect.Map:
		e.mapValue(v)
	case reflect.Interface:
		e.iface(v)
	default: // func, chan, unsafe pointer: nil (scan refused others)
		e.buf = append(e.buf, tagNil)
	}
}

func (e *encoder) pointer(v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, tagNil)
		return
	}
	k := target{v.Pointer(), v.Type().Elem()}
	if k.t.Size() > 0 {
		if in, ok := e.g.interior[k]; ok {
			e.buf = append(e.buf, tagInterior)
			e.uint(uint64(in[0]))
			e.uint(uint64(in[1]))
			return
		}
		if id, ok := e.ids[k]; ok {
			e.buf = append(e.buf, tagRef)
			e.uint(uint64(id))
			return
		}
		e.ids[k] = len(e.ids)
	}
	e.buf = append(e.buf, tagNew)
	e.value(v.Elem())
}

func (e *encoder) slice(v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, tagNil)
		return
	}
	e.buf = append(e.buf, tagNew)
	e.uint(uint64(v.Len()))
	id := -1
	if v.Len() > 0 && v.Type().Elem().Size() > 0 {
		id = e.g.arrayID(v)
	}
	e.uint(uint64(id + 1))
	if v.Type().Elem().Kind() == reflect.Uint8 {
		e.buf = append(e.buf, v.Bytes()...)
		return
	}
	for i := range v.Len() {
		e.value(v.Index(i))
	}
}

// mapValue writes a map's entries in the order of their keys' bytes when
// the keys hold no pointer, so that equal maps are written alike.
func (e *encoder) mapValue(v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, tagNil)
		return
	}
	e.buf = append(e.buf, tagNew)
	e.uint(uint64(v.Len()))
	if walks(v.Type().Key()) {
		for it := v.MapRange(); it.Next(); {
			e.value(addressableCopy(it.Key()))
			e.value(addressableCopy(it.Value()))
		}
		return
	}
	type entry struct {
		key []byte
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		ke := &encoder{g: e.g, ids: e.ids}
		ke.value(addressableCopy(it.Key()))
		entries = append(entries, entry{ke.buf, it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	for _, en := range entries {
		e.buf = append(e.buf, en.key...)
		e.value(addressableCopy(en.val))
	}
}

func (e *encoder) iface(v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, tagNil)
		return
	}
	c := v.Elem()
	if i := sentinelIndex(c); i >= 0 {
		e.buf = append(e.buf, tagSentinel)
		e.uint(uint64(i))
		return
	}
	e.buf = append(e.buf, tagNew)
	name := typeName(c.Type())
	e.uint(uint64(len(name)))
	e.buf = append(e.buf, name...)
	e.value(addressableCopy(c))
}
