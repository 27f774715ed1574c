// Package snapshot encodes a graph of Go values to bytes and back whole:
// pointers that shared a target, or pointed into a slice, do so again once
// decoded.
//
// encoding/json and encoding/gob copy a pointer's target at every
// reference and drop the difference between a nil and an empty slice or
// map; a model whose parts refer to each other by pointer (a package's
// layout names its ConfigMaps and pins by pointer, and is searched by
// pointer equality) does not survive them. Snapshot is generic: it reads
// and writes every field by reflection, unexported ones too, so a type
// needs no code of its own. What it cannot keep it refuses (Encode
// fails): a non-nil func, channel or unsafe pointer, an interface holding
// a type not registered (Register), a pointer into part of another
// pointer's target. A type with MarshalBinary and UnmarshalBinary
// (time.Time) is stored by them.
//
// The bytes are for the same build of the same program to read back: they
// hold no description of the types.
package snapshot

import (
	"encoding"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// magic starts every snapshot.
const magic = "snap1\n"

var registry struct {
	sync.RWMutex
	types     map[string]reflect.Type
	sentinels []error // by index
}

// typeName names a concrete type an interface may hold, unique in a
// program: its package path and name, with a "*" for each pointer.
func typeName(t reflect.Type) string {
	stars := ""
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		stars += "*"
		t = t.Elem()
	}
	if t.Name() == "" {
		return stars + t.String()
	}
	return stars + t.PkgPath() + "." + t.Name()
}

// Register lets interface fields hold the concrete types of values (an
// error type a model keeps, say). The standard library's common error
// types are registered already.
func Register(values ...any) {
	registry.Lock()
	defer registry.Unlock()
	if registry.types == nil {
		registry.types = map[string]reflect.Type{}
	}
	for _, v := range values {
		t := reflect.TypeOf(v)
		registry.types[typeName(t)] = t
	}
}

// sentinel errors are kept by identity: errors.Is against them holds
// after a round trip.
func init() {
	Register(errors.New(""), fmt.Errorf("%w", io.EOF), fmt.Errorf("%w %w", io.EOF, io.EOF),
		&fs.PathError{}, &os.SyscallError{}, &os.LinkError{}, syscall.Errno(0),
		&strconv.NumError{}, base64.CorruptInputError(0))
	registry.sentinels = []error{io.EOF, io.ErrUnexpectedEOF, fs.ErrNotExist, fs.ErrExist,
		fs.ErrPermission, fs.ErrInvalid, fs.ErrClosed, strconv.ErrRange, strconv.ErrSyntax}
}

func lookupType(name string) (reflect.Type, bool) {
	registry.RLock()
	defer registry.RUnlock()
	t, ok := registry.types[name]
	return t, ok
}

func sentinelIndex(v reflect.Value) int {
	if v.Kind() != reflect.Pointer || !v.Type().Comparable() {
		return -1
	}
	e, ok := v.Interface().(error)
	if !ok {
		return -1
	}
	for i, s := range registry.sentinels {
		if e == s {
			return i
		}
	}
	return -1
}

var (
	binaryMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// byMarshal reports whether t is stored by its MarshalBinary.
func byMarshal(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.Implements(binaryMarshaler) && reflect.PointerTo(t).Implements(binaryUnmarshaler)
}

// settable returns v (addressable) with its unexported-field read-only
// flag cleared, so that it can be read and set as any field.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// addressableCopy is a settable copy of v (a map key or value, an
// interface's content).
func addressableCopy(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// plain caches whether values of a type hold no pointer, slice, map,
// string, interface or func: copied as they are, nothing to track.
var plain sync.Map // reflect.Type -> bool

// walks reports whether scanning values of t can find anything to track
// (a pointer, or a slice a pointer may point into).
func walks(t reflect.Type) bool {
	if b, ok := plain.Load(t); ok {
		return !b.(bool)
	}
	w := walksUncached(t, map[reflect.Type]bool{})
	plain.Store(t, !w)
	return w
}

func walksUncached(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true // recursive: it holds pointers
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return walksUncached(t.Elem(), seen)
	case reflect.Struct:
		if byMarshal(t) {
			return false
		}
		for i := range t.NumField() {
			if walksUncached(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
