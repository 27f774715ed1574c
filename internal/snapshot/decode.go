package snapshot

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// errShort is the error of a snapshot cut short or not written by Encode.
var errShort = errors.New("snapshot: truncated or corrupt")

// Decode reads a snapshot Encode wrote of a value of v's type into the
// value v points to (v must be a non-nil pointer). Bytes that are not
// such a snapshot give an error, never a panic. The byte slices decoded
// share data's storage (nothing is copied): data must not change after.
func Decode(data []byte, v any) (err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("snapshot: Decode needs a non-nil pointer, got %T", v)
	}
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return errors.New("snapshot: not a snapshot")
	}
	d := &decoder{data: data, pos: len(magic), arrays: map[int]reflect.Value{}}
	defer func() {
		if r := recover(); r != nil {
			err = d.err
			if err == nil {
				err = fmt.Errorf("%w: %v", errShort, r)
			}
		}
	}()
	if d.byte() != tagNew {
		return errShort
	}
	if rv.Type().Elem().Size() > 0 {
		d.objs = append(d.objs, rv)
	}
	d.value(rv.Elem())
	if d.err == nil {
		d.fix()
	}
	if d.err == nil && d.pos != len(d.data) {
		d.err = fmt.Errorf("%w: %d bytes left over", errShort, len(d.data)-d.pos)
	}
	return d.err
}

type decoder struct {
	data   []byte
	pos    int
	objs   []reflect.Value       // pointers to the targets read, by number
	arrays map[int]reflect.Value // slices pointers point into, by number
	fixups []fixup               // pointers into slices not read yet
	depth  int                   // values being read, one in another
	err    error
}

// maxDepth bounds how deep values nest (a pointer in a struct in a
// slice...): a recursive type's long chain read from hostile bytes must
// not exhaust the stack.
const maxDepth = 10_000

// fixup is a pointer into a slice read after the pointer.
type fixup struct {
	ptr          reflect.Value
	array, index int
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errShort}, a...)...)
	}
	panic(d.err) // unwinds to Decode
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.data) {
		d.fail("at its end")
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *decoder) uint() uint64 {
	u, n := binary.Uvarint(d.data[d.pos:])
	if n <= 0 {
		d.fail("bad number at %d", d.pos)
	}
	d.pos += n
	return u
}

func (d *decoder) int() int64 {
	i, n := binary.Varint(d.data[d.pos:])
	if n <= 0 {
		d.fail("bad number at %d", d.pos)
	}
	d.pos += n
	return i
}

// length reads a count of items that take at least a byte each... or
// none (empty structs): never more than the bytes left.
func (d *decoder) length() int {
	n := d.uint()
	if n > uint64(len(d.data)-d.pos) {
		d.fail("a length of %d with %d bytes left", n, len(d.data)-d.pos)
	}
	return int(n)
}

func (d *decoder) raw(n int) []byte {
	if n < 0 || n > len(d.data)-d.pos {
		d.fail("%d bytes wanted, %d left", n, len(d.data)-d.pos)
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b
}

// value reads into v, which is settable.
func (d *decoder) value(v reflect.Value) {
	if d.depth++; d.depth > maxDepth {
		d.fail("values nested more than %d deep", maxDepth)
	}
	defer func() { d.depth-- }()
	t := v.Type()
	if byMarshal(t) {
		b := d.raw(d.length())
		if err := v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
			d.fail("%s: %v", t, err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(d.byte() != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := d.int()
		if v.OverflowInt(i) {
			d.fail("%d overflows %s", i, t)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := d.uint()
		if v.OverflowUint(u) {
			d.fail("%d overflows %s", u, t)
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.Float64frombits(d.uint()))
	case reflect.Complex64, reflect.Complex128:
		re := math.Float64frombits(d.uint())
		v.SetComplex(complex(re, math.Float64frombits(d.uint())))
	case reflect.String:
		v.SetString(string(d.raw(d.length())))
	case reflect.Pointer:
		d.pointer(v)
	case reflect.Slice:
		d.slice(v)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			reflect.Copy(v, reflect.ValueOf(d.raw(v.Len())))
			return
		}
		for i := range v.Len() {
			d.value(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(settable(v.Field(i)))
		}
	case reflect.Map:
		d.mapValue(v)
	case reflect.Interface:
		d.iface(v)
	default:
		if d.byte() != tagNil {
			d.fail("a %s that is not nil", t)
		}
	}
}

func (d *decoder) pointer(v reflect.Value) {
	et := v.Type().Elem()
	switch tag := d.byte(); tag {
	case tagNil:
		v.SetZero()
	case tagNew:
		p := reflect.New(et)
		if et.Size() > 0 {
			d.objs = append(d.objs, p)
		}
		v.Set(p)
		d.value(p.Elem())
	case tagRef:
		id := d.uint()
		if id >= uint64(len(d.objs)) || d.objs[id].Type() != v.Type() {
			d.fail("reference %d to no %s", id, et)
		}
		v.Set(d.objs[id])
	case tagInterior:
		a, i := d.uint(), d.uint()
		if a > math.MaxInt32 || i > math.MaxInt32 {
			d.fail("bad slice reference")
		}
		if s, ok := d.arrays[int(a)]; ok {
			d.into(v, s, int(i))
			return
		}
		d.fixups = append(d.fixups, fixup{ptr: v, array: int(a), index: int(i)})
	default:
		d.fail("pointer tag %d", tag)
	}
}

func (d *decoder) slice(v reflect.Value) {
	switch tag := d.byte(); tag {
	case tagNil:
		v.SetZero()
		return
	case tagNew:
	default:
		d.fail("slice tag %d", tag)
	}
	n := d.length()
	id := d.uint()
	if v.Type().Elem().Kind() == reflect.Uint8 {
		b := d.raw(n)
		v.Set(reflect.ValueOf(b[:n:n]).Convert(v.Type()))
		return
	}
	s := reflect.MakeSlice(v.Type(), n, n)
	if id > 0 {
		if id > math.MaxInt32 {
			d.fail("bad slice number")
		}
		d.arrays[int(id-1)] = s
	}
	for i := range n {
		d.value(s.Index(i))
	}
	v.Set(s)
}

func (d *decoder) mapValue(v reflect.Value) {
	switch tag := d.byte(); tag {
	case tagNil:
		v.SetZero()
		return
	case tagNew:
	default:
		d.fail("map tag %d", tag)
	}
	n := d.length()
	t := v.Type()
	m := reflect.MakeMapWithSize(t, n)
	for range n {
		k := reflect.New(t.Key()).Elem()
		val := reflect.New(t.Elem()).Elem()
		d.copied(func() { d.value(k); d.value(val) })
		m.SetMapIndex(k, val)
	}
	v.Set(m)
}

func (d *decoder) iface(v reflect.Value) {
	switch tag := d.byte(); tag {
	case tagNil:
		v.SetZero()
	case tagSentinel:
		i := d.uint()
		if i >= uint64(len(registry.sentinels)) {
			d.fail("sentinel %d", i)
		}
		s := reflect.ValueOf(registry.sentinels[i])
		if !s.Type().AssignableTo(v.Type()) {
			d.fail("sentinel %s in a %s", s.Type(), v.Type())
		}
		v.Set(s)
	case tagNew:
		name := string(d.raw(d.length()))
		ct, ok := lookupType(name)
		if !ok || !ct.AssignableTo(v.Type()) {
			d.fail("type %q in a %s", name, v.Type())
		}
		c := reflect.New(ct).Elem()
		d.copied(func() { d.value(c) })
		v.Set(c)
	default:
		d.fail("interface tag %d", tag)
	}
}

// copied reads a value that is then copied (a map's key or value, an
// interface's content): a pointer in it into a slice not read yet would
// be set on the copy read, not on the one kept.
func (d *decoder) copied(read func()) {
	n := len(d.fixups)
	read()
	if len(d.fixups) > n {
		d.fail("a pointer into a slice written after it, inside a map or an interface")
	}
}

// into sets pointer p to the element i of slice s.
func (d *decoder) into(p, s reflect.Value, i int) {
	if i >= s.Len() || s.Index(i).Addr().Type() != p.Type() {
		d.fail("a pointer into a slice that is not there")
	}
	p.Set(s.Index(i).Addr())
}

// fix sets the pointers into slices read after them.
func (d *decoder) fix() {
	for _, f := range d.fixups {
		s, ok := d.arrays[f.array]
		if !ok {
			d.fail("a pointer into a slice that is not there")
		}
		d.into(f.ptr, s, f.index)
	}
}
