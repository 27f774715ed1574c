package check

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kjson "sigs.k8s.io/json"
)

// internalCRD is the CRD raw (JSON) as the API server holds it to validate
// a create: decoded as v1 (decodeCRD), defaulted and converted to the
// internal version. The slow road decodes the whole CRD as v1 and
// converts it, copying every node of its schemas; fastInternalCRD decodes
// the schemas straight to the internal version and asks the API server's
// code for everything else. It answers only when it is sure to give what
// the slow road gives (the same internal object, no unknown field, no
// decode error; TestFastCRDAgrees and FuzzFastCRD hold it to that), and
// ok is false otherwise: the caller then takes the slow road, which also
// words the errors.
//
// How: each versions[i].schema.openAPIV3Schema object is decoded by
// schemaDecoder, and the document decoded as v1 with those objects
// replaced by placeholders ({"description":"pinseal placeholder N"}, N
// the first version whose schema is semantically equal, so the
// conversion's hoisting of identical per-version schemas to
// spec.validation, which compares them with apiequality.Semantic, sees
// the same equalities), defaulted and converted by the API server's own
// functions; the placeholders are then swapped for the decoded schemas.
func fastInternalCRD(raw []byte) (v1 *apiextv1.CustomResourceDefinition, crd *apiextensions.CustomResourceDefinition, ok bool) {
	spans, ok := schemaSpans(raw)
	if !ok || len(spans) == 0 {
		return nil, nil, false
	}
	schemas := make([]*apiextensions.JSONSchemaProps, len(spans))
	for k, sp := range spans {
		schemas[k] = sp.schema
	}
	// class[k]: the first span whose schema is semantically equal, as
	// the conversion compares them.
	class := make([]int, len(spans))
	size := len(raw)
	for _, sp := range spans {
		size -= sp.end - sp.start - 64
	}
	rewritten := make([]byte, 0, size)
	last := 0
	for k, sp := range spans {
		class[k] = k
		for j := range k {
			if apiequality.Semantic.DeepEqual(schemas[j], schemas[k]) {
				class[k] = j
				break
			}
		}
		rewritten = append(rewritten, raw[last:sp.start]...)
		rewritten = strconv.AppendQuote(append(rewritten, `{"description":`...), placeholder(class[k]))
		rewritten = append(rewritten, '}')
		last = sp.end
	}
	rewritten = append(rewritten, raw[last:]...)
	v1 = new(apiextv1.CustomResourceDefinition)
	if strict, err := decodeCRD(rewritten, v1); err != nil || len(strict) != 0 {
		return nil, nil, false
	}
	apiextv1.SetObjectDefaults_CustomResourceDefinition(v1)
	crd = new(apiextensions.CustomResourceDefinition)
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, crd, nil); err != nil {
		return nil, nil, false
	}
	// Swap each placeholder for its schema; where the conversion hoisted
	// them to spec.validation (every version's equal), the first
	// version's.
	swap := func(v *apiextensions.CustomResourceValidation, k int) bool {
		if v == nil || v.OpenAPIV3Schema == nil || v.OpenAPIV3Schema.Description != placeholder(class[k]) {
			return false
		}
		v.OpenAPIV3Schema = schemas[k]
		return true
	}
	if crd.Spec.Validation != nil {
		return v1, crd, spans[0].version == 0 && swap(crd.Spec.Validation, 0)
	}
	for k, sp := range spans {
		if sp.version >= len(crd.Spec.Versions) || !swap(crd.Spec.Versions[sp.version].Schema, k) {
			return nil, nil, false
		}
	}
	return v1, crd, true
}

// placeholder is the description of the k-th placeholder schema.
func placeholder(k int) string { return "pinseal placeholder " + strconv.Itoa(k) }

// span is where the object of versions[version].schema.openAPIV3Schema is
// in a CRD's JSON, and that schema decoded.
type span struct {
	version, start, end int
	schema              *apiextensions.JSONSchemaProps
}

// schemaSpans finds and decodes each versions[i].schema.openAPIV3Schema
// object of the CRD raw; ok is false when the document is not a JSON
// object whose keys on that way are plain and given once, or a schema
// does not decode (the slow road then decodes it).
func schemaSpans(raw []byte) (spans []span, ok bool) {
	d := schemaDecoder{data: raw}
	ok = d.object(func(key []byte) bool {
		if string(key) != "spec" || d.peek() != '{' {
			return d.skipAny()
		}
		return d.object(func(key []byte) bool {
			if string(key) != "versions" || d.peek() != '[' {
				return d.skipAny()
			}
			return d.array(func(i int) bool {
				if d.peek() != '{' {
					return d.skipAny()
				}
				return d.object(func(key []byte) bool {
					if string(key) != "schema" || d.peek() != '{' {
						return d.skipAny()
					}
					return d.object(func(key []byte) bool {
						if string(key) != "openAPIV3Schema" || d.peek() != '{' {
							return d.skipAny()
						}
						start := d.i
						s := new(apiextensions.JSONSchemaProps)
						if !d.schema(s, false) {
							return false
						}
						spans = append(spans, span{version: i, start: start, end: d.i, schema: s})
						return true
					})
				})
			})
		})
	})
	d.ws()
	return spans, ok && d.i == len(raw)
}

// schemaDecoder decodes JSON schemas (JSONSchemaProps) straight to the
// internal version, as k8s.io/apiextensions-apiserver's v1 types decode
// (sigs.k8s.io/json: keys matched case-sensitively, numbers in untyped
// values kept as integers) and convert (zz_generated.conversion.go). It
// decodes by hand only what it knows to decode as they do (plain keys
// given once, the fields below, values of their type) and hands any other
// schema object whole to the API server's decoder and conversion; fatal is
// set when that one refuses it (an unknown field, a type error: the slow
// road words it).
type schemaDecoder struct {
	data  []byte
	i     int
	depth int
	fatal bool
	// anyKeys lets objects have keys with escapes or given twice (while
	// skipping what the API server's code decodes).
	anyKeys bool
	keys    [][]byte                // the keys of the objects being read, innermost last
	sets    map[int]map[string]bool // an object's keys by where they start in keys, once it has many
}

// maxDepth bounds how deep the decoder nests (deeper: the slow road).
const maxDepth = 200

func (d *schemaDecoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next value's first byte (0 at the end).
func (d *schemaDecoder) peek() byte {
	d.ws()
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// object walks the object at d.i, calling each for every key (plain: no
// escape) with d.i at its value, which each must consume; false on
// anything else, a key given twice, or each's false.
func (d *schemaDecoder) object(each func(key []byte) bool) bool {
	if d.peek() != '{' || d.depth >= maxDepth {
		return false
	}
	d.depth++
	defer func() { d.depth-- }()
	d.i++
	base := len(d.keys)
	defer func() {
		d.keys = d.keys[:base]
		delete(d.sets, base)
	}()
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		key, plain, ok := d.str()
		if !ok || !d.anyKeys && (!plain || !d.first(base, key)) {
			return false
		}
		if d.peek() != ':' {
			return false
		}
		d.i++
		if d.peek() == 0 || !each(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// first records key, a key of the object whose keys start at base of
// d.keys; false when the object has had it already.
func (d *schemaDecoder) first(base int, key []byte) bool {
	keys := d.keys[base:]
	if len(keys) < 32 {
		for _, k := range keys {
			if bytes.Equal(k, key) {
				return false
			}
		}
		d.keys = append(d.keys, key)
		return true
	}
	// Many keys: a set of them, in the first slot's place.
	if d.sets == nil {
		d.sets = map[int]map[string]bool{}
	}
	set := d.sets[base]
	if set == nil {
		set = make(map[string]bool, 64)
		for _, k := range keys {
			set[string(k)] = true
		}
		d.sets[base] = set
	}
	if set[string(key)] {
		return false
	}
	set[string(key)] = true
	return true
}

// array walks the array at d.i, calling each for every element with d.i
// at it.
func (d *schemaDecoder) array(each func(i int) bool) bool {
	if d.peek() != '[' || d.depth >= maxDepth {
		return false
	}
	d.depth++
	defer func() { d.depth-- }()
	d.i++
	if d.peek() == ']' {
		d.i++
		return true
	}
	for n := 0; ; n++ {
		if d.peek() == 0 || !each(n) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// str reads the string at d.i and returns its text between the quotes;
// plain is true when that is its value as is (no escape, valid UTF-8).
// ok is false when it is not a valid JSON string.
func (d *schemaDecoder) str() (text []byte, plain, ok bool) {
	d.i++ // the opening quote
	start := d.i
	plain = true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			text = d.data[start:d.i]
			d.i++
			if !plain || !utf8.Valid(text) {
				return text, false, true
			}
			return text, true, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if d.i+1 >= len(d.data) {
				return nil, false, false
			}
			switch d.data[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if d.i+6 > len(d.data) {
					return nil, false, false
				}
				for _, h := range d.data[d.i+2 : d.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false, false
					}
				}
				d.i += 6
			default:
				return nil, false, false
			}
		default:
			d.i++
		}
	}
	return nil, false, false
}

// stringValue is the string at d.i, unquoted as the API server's decoder
// unquotes it (by that decoder when it has escapes or is not valid UTF-8).
func (d *schemaDecoder) stringValue() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i
	text, plain, ok := d.str()
	if !ok {
		return "", false
	}
	if plain {
		return string(text), true
	}
	if s, ok := unescape(text); ok {
		return s, true
	}
	var s string
	if err := kjson.UnmarshalCaseSensitivePreserveInts(d.data[start:d.i], &s); err != nil {
		return "", false
	}
	return s, true
}

// unescape is the valid UTF-8 text of a JSON string with its escapes
// replaced, as encoding/json's unquote replaces them; false when it has
// a \u escape or is not valid UTF-8 (which that unquote also rewrites).
func unescape(text []byte) (string, bool) {
	if !utf8.Valid(text) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(text))
	for {
		i := bytes.IndexByte(text, '\\')
		if i < 0 {
			b.Write(text)
			break
		}
		b.Write(text[:i])
		// str checked that an escape's next byte is there.
		switch c := text[i+1]; c {
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
		text = text[i+2:]
	}
	return b.String(), true
}

// number reads a JSON number at d.i.
func (d *schemaDecoder) number() ([]byte, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.data) && d.data[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, false
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return d.data[start:d.i], true
}

// literal reads true, false or null at d.i.
func (d *schemaDecoder) literal() ([]byte, bool) {
	for _, w := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(d.data[d.i:], []byte(w)) {
			d.i += len(w)
			return d.data[d.i-len(w) : d.i], true
		}
	}
	return nil, false
}

// skip reads any valid JSON value at d.i.
func (d *schemaDecoder) skip() bool {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func([]byte) bool { return d.skip() })
	case c == '[':
		return d.array(func(int) bool { return d.skip() })
	case c == '"':
		_, _, ok := d.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := d.number()
		return ok
	default:
		_, ok := d.literal()
		return ok
	}
}

// skipAny is skip of a value whose objects may have keys with escapes or
// given twice.
func (d *schemaDecoder) skipAny() bool {
	d.anyKeys = true
	ok := d.skip()
	d.anyKeys = false
	return ok
}

// value reads any valid JSON value at d.i and returns its bytes.
func (d *schemaDecoder) value() ([]byte, bool) {
	d.ws()
	start := d.i
	if !d.skip() {
		return nil, false
	}
	return d.data[start:d.i], true
}

func (d *schemaDecoder) boolValue() (bool, bool) {
	if c := d.peek(); c != 't' && c != 'f' {
		return false, false
	}
	b, ok := d.literal()
	if !ok || string(b) == "null" {
		return false, false
	}
	return string(b) == "true", true
}

func (d *schemaDecoder) int64Value() (*int64, bool) {
	if c := d.peek(); c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	b, ok := d.number()
	if !ok {
		return nil, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return &n, err == nil
}

func (d *schemaDecoder) float64Value() (*float64, bool) {
	if c := d.peek(); c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	b, ok := d.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return &f, err == nil
}

func (d *schemaDecoder) strings() ([]string, bool) {
	out := []string{}
	ok := d.array(func(int) bool {
		s, ok := d.stringValue()
		out = append(out, s)
		return ok
	})
	return out, ok
}

// jsonValue is a value of an untyped field (default, example, an enum's
// item), converted as the API server converts v1.JSON (which keeps the
// value's bytes as they are). null is left to the slow road.
func (d *schemaDecoder) jsonValue() (apiextensions.JSON, bool) {
	if d.peek() == 'n' {
		return nil, false
	}
	raw, ok := d.value()
	if !ok {
		return nil, false
	}
	var out apiextensions.JSON
	if err := apiextv1.Convert_v1_JSON_To_apiextensions_JSON(&apiextv1.JSON{Raw: raw}, &out, nil); err != nil {
		return nil, false
	}
	return out, true
}

// schema decodes the schema object at d.i into out (zero); lenient when
// it is decoded as the API server decodes the schemas of items,
// additionalProperties and the like (their UnmarshalJSON:
// k8s.io/apimachinery/pkg/util/json, no unknown-field check) rather than
// by the request's strict decoder. What fields does not decode is handed
// to the API server's code whole.
func (d *schemaDecoder) schema(out *apiextensions.JSONSchemaProps, lenient bool) bool {
	d.ws()
	start := d.i
	if d.fields(out, lenient) {
		return true
	}
	if d.fatal {
		return false
	}
	*out = apiextensions.JSONSchemaProps{}
	d.i = start // after any space
	if !d.skipAny() {
		d.fatal = true
		return false
	}
	raw := d.data[start:d.i]
	var p apiextv1.JSONSchemaProps
	if lenient {
		if err := utiljson.Unmarshal(raw, &p); err != nil {
			d.fatal = true
			return false
		}
	} else if strict, err := decodeCRDPart(raw, &p); err != nil || len(strict) != 0 {
		d.fatal = true
		return false
	}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&p, out, nil); err != nil {
		d.fatal = true
		return false
	}
	return true
}

// decodeCRDPart decodes a part of a CRD as decodeCRD decodes the whole.
func decodeCRDPart(raw []byte, v any) ([]error, error) {
	return kjson.UnmarshalStrict(raw, v, kjson.DisallowUnknownFields)
}

// fields decodes the fields of the schema object at d.i that it knows;
// false (out then half written) at anything else.
func (d *schemaDecoder) fields(out *apiextensions.JSONSchemaProps, lenient bool) bool {
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "description":
			out.Description, ok = d.stringValue()
		case "type":
			out.Type, ok = d.stringValue()
		case "format":
			out.Format, ok = d.stringValue()
		case "title":
			out.Title, ok = d.stringValue()
		case "pattern":
			out.Pattern, ok = d.stringValue()
		case "x-kubernetes-list-type":
			var s string
			s, ok = d.stringValue()
			out.XListType = &s
		case "x-kubernetes-map-type":
			var s string
			s, ok = d.stringValue()
			out.XMapType = &s
		case "nullable":
			out.Nullable, ok = d.boolValue()
		case "uniqueItems":
			out.UniqueItems, ok = d.boolValue()
		case "exclusiveMaximum":
			out.ExclusiveMaximum, ok = d.boolValue()
		case "exclusiveMinimum":
			out.ExclusiveMinimum, ok = d.boolValue()
		case "x-kubernetes-embedded-resource":
			out.XEmbeddedResource, ok = d.boolValue()
		case "x-kubernetes-int-or-string":
			out.XIntOrString, ok = d.boolValue()
		case "x-kubernetes-preserve-unknown-fields":
			var b bool
			b, ok = d.boolValue()
			out.XPreserveUnknownFields = &b
		case "maxLength":
			out.MaxLength, ok = d.int64Value()
		case "minLength":
			out.MinLength, ok = d.int64Value()
		case "maxItems":
			out.MaxItems, ok = d.int64Value()
		case "minItems":
			out.MinItems, ok = d.int64Value()
		case "maxProperties":
			out.MaxProperties, ok = d.int64Value()
		case "minProperties":
			out.MinProperties, ok = d.int64Value()
		case "maximum":
			out.Maximum, ok = d.float64Value()
		case "minimum":
			out.Minimum, ok = d.float64Value()
		case "multipleOf":
			out.MultipleOf, ok = d.float64Value()
		case "required":
			out.Required, ok = d.strings()
		case "x-kubernetes-list-map-keys":
			out.XListMapKeys, ok = d.strings()
		case "default":
			var j apiextensions.JSON
			j, ok = d.jsonValue()
			out.Default = &j
		case "example":
			var j apiextensions.JSON
			j, ok = d.jsonValue()
			out.Example = &j
		case "enum":
			out.Enum = []apiextensions.JSON{}
			ok = d.array(func(int) bool {
				j, ok := d.jsonValue()
				out.Enum = append(out.Enum, j)
				return ok
			})
		case "properties":
			out.Properties, ok = d.schemaMap(lenient)
		case "items":
			if d.peek() != '{' {
				return false
			}
			s := new(apiextensions.JSONSchemaProps)
			ok = d.schema(s, true)
			out.Items = &apiextensions.JSONSchemaPropsOrArray{Schema: s}
		case "additionalProperties":
			if d.peek() != '{' {
				var b bool
				b, ok = d.boolValue()
				out.AdditionalProperties = &apiextensions.JSONSchemaPropsOrBool{Allows: b}
				break
			}
			s := new(apiextensions.JSONSchemaProps)
			ok = d.schema(s, true)
			out.AdditionalProperties = &apiextensions.JSONSchemaPropsOrBool{Allows: true, Schema: s}
		case "allOf":
			out.AllOf, ok = d.schemaList(lenient)
		case "oneOf":
			out.OneOf, ok = d.schemaList(lenient)
		case "anyOf":
			out.AnyOf, ok = d.schemaList(lenient)
		case "not":
			if d.peek() != '{' {
				return false
			}
			out.Not = new(apiextensions.JSONSchemaProps)
			ok = d.schema(out.Not, lenient)
		case "x-kubernetes-validations":
			out.XValidations, ok = d.validations(lenient)
		}
		return ok && !d.fatal
	})
}

func (d *schemaDecoder) schemaMap(lenient bool) (map[string]apiextensions.JSONSchemaProps, bool) {
	if d.peek() != '{' {
		return nil, false
	}
	m := map[string]apiextensions.JSONSchemaProps{}
	ok := d.object(func(key []byte) bool {
		var s apiextensions.JSONSchemaProps
		if !d.schema(&s, lenient) {
			return false
		}
		m[string(key)] = s
		return true
	})
	return m, ok
}

func (d *schemaDecoder) schemaList(lenient bool) ([]apiextensions.JSONSchemaProps, bool) {
	l := []apiextensions.JSONSchemaProps{}
	ok := d.array(func(int) bool {
		if d.peek() != '{' {
			return false
		}
		l = append(l, apiextensions.JSONSchemaProps{})
		return d.schema(&l[len(l)-1], lenient)
	})
	return l, ok
}

// validations decodes x-kubernetes-validations with the API server's
// decoder and conversion.
func (d *schemaDecoder) validations(lenient bool) (apiextensions.ValidationRules, bool) {
	if d.peek() != '[' {
		return nil, false
	}
	raw, ok := d.value()
	if !ok {
		return nil, false
	}
	var rules apiextv1.ValidationRules
	if lenient {
		if err := utiljson.Unmarshal(raw, &rules); err != nil {
			return nil, false
		}
	} else if strict, err := decodeCRDPart(raw, &rules); err != nil || len(strict) != 0 {
		return nil, false
	}
	out := make(apiextensions.ValidationRules, len(rules))
	for i := range rules {
		if err := apiextv1.Convert_v1_ValidationRule_To_apiextensions_ValidationRule(&rules[i], &out[i], nil); err != nil {
			return nil, false
		}
	}
	return out, true
}
