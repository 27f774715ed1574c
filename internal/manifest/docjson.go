package manifest

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// A generated manifest's CRD is tens to hundreds of kilobytes of YAML
// whose only use is its JSON (for the CRD judge) and its identity. Parsing
// it into a yaml.Node tree to write that JSON costs most of a cold run;
// AppendDocJSON writes the JSON straight from the bytes instead, for the YAML
// that controller-gen and upstream provider manifests are made of:
//
//   - a block mapping at column 0 as the root; block mappings and block
//     sequences (also a sequence at its key's indentation, and a mapping
//     after "- "), keys plain or quoted on one line;
//   - plain scalars, also folded over several lines; single- and
//     double-quoted scalars (every escape yaml.v3 knows), also over
//     several lines; literal and folded block scalars with chomping and
//     indentation indicators; empty flow collections and flow sequences
//     of one-line scalars;
//   - comments and blank lines.
//
// Everything else declines, and the caller parses the document with
// yaml.v3 as before: anchors, aliases, tags, "?" keys, merge keys,
// directives, document markers, a key that is not a string, a duplicate
// key, a tab outside a block scalar's text, CR, a BOM, bytes that are
// not UTF-8 or a character yaml.v3 does not read, indentation that yaml.v3
// reads otherwise or rejects, nesting deeper than maxDocJSONDepth, and
// any construct not listed above. Scalars are folded as yaml.v3's scanner
// folds them (go.yaml.in/yaml/v3 scannerc.go: yaml_parser_scan_plain_scalar,
// yaml_parser_scan_flow_scalar, yaml_parser_scan_block_scalar), and a
// plain scalar that is not surely a string is resolved and written by the
// code JSON uses (yaml.v3's own resolution, then Decode and Marshal), so
// the output is byte for byte JSON of ParseDoc's tree; FuzzDocJSON holds
// the two to each other. The reader reads the document's bytes once
// (twice where a line may be a key), with no recursion deeper than
// maxDocJSONDepth.

// DocHead is what ParseDoc reads of an object besides its tree.
type DocHead struct {
	APIVersion, Kind, Name, Namespace string
	// Line is Object.Line: the line of metadata.name, else kind, else the
	// document's first key, in the whole text.
	Line int
}

// maxDocJSONDepth bounds the nesting AppendDocJSON reads (a CRD's schema is a
// few dozen deep).
const maxDocJSONDepth = 100

// maxDocJSONKey is the longest plain key AppendDocJSON reads (yaml.v3 stops
// looking for a simple key's colon after 1,024 characters).
const maxDocJSONKey = 512

// AppendDocJSON appends to dst what AppendJSON writes of the document's
// tree as ParseDoc parses it, and returns what ParseDoc reads of the
// object; ok is false (and dst returned as it was) when the document is
// not of the YAML AppendDocJSON reads, and the caller parses it with ParseDoc.
func AppendDocJSON(dst []byte, d Doc) (head DocHead, js []byte, ok bool) {
	h, out, why := appendDocJSON(dst, d.bytes())
	if why != "" {
		return DocHead{}, dst, false
	}
	h.Line += d.line - 1
	return h, out, true
}

var docReaders = sync.Pool{New: func() any { return new(docReader) }}

// appendDocJSON is AppendDocJSON of the document text src, with lines
// counted from 1 at src's start; why says why it declines ("" when not).
func appendDocJSON(dst, src []byte) (DocHead, []byte, string) {
	r := docReaders.Get().(*docReader)
	defer func() {
		clear(r.ents[:cap(r.ents)]) // keys point into src
		*r = docReader{ents: r.ents[:0], buf: r.buf[:0], tmp: r.tmp[:0]}
		if cap(r.buf) > maxPooledScratch {
			r.buf = nil
		}
		if cap(r.tmp) > maxPooledScratch {
			r.tmp = nil
		}
		docReaders.Put(r)
	}()
	r.src, r.out, r.ln = src, dst, 1
	if !r.document() {
		return DocHead{}, dst, r.why
	}
	h := DocHead{APIVersion: r.apiVersion, Kind: r.kind, Name: r.name, Namespace: r.namespace, Line: r.rootLine}
	if r.kindLine > 0 {
		h.Line = r.kindLine
	}
	if r.nameLine > 0 {
		h.Line = r.nameLine
	}
	return h, r.out, ""
}

// maxPooledScratch is the largest scratch buffer a pooled reader keeps.
const maxPooledScratch = 1 << 20

// Why AppendDocJSON declines a document (tests name them).
const (
	declineText     = "a character or line AppendDocJSON does not read (CR, tab, BOM, control, non-UTF-8, document marker)"
	declineRoot     = "not a block mapping at column 0"
	declineKey      = "a line that is not a key where a key is expected"
	declineIndent   = "indentation yaml.v3 reads otherwise"
	declineDepth    = "nesting deeper than maxDocJSONDepth"
	declineDup      = "a duplicate key"
	declineKeyKind  = "a key that is not a plain or quoted string on one line"
	declineTab      = "a tab outside a block scalar's text"
	declineNode     = "an anchor, alias, tag, directive or other indicator"
	declineColon    = "': ' inside a plain scalar"
	declineQuoted   = "a quoted scalar AppendDocJSON does not read"
	declineBlock    = "a block scalar header AppendDocJSON does not read"
	declineFlow     = "a flow collection AppendDocJSON does not read"
	declineTrailing = "text after a value on its line"
	declineScalar   = "a scalar that does not convert to JSON"
	declineNested   = "a sequence entry on a key's or an entry's line"
)

// docReader reads one document; src[p:] starts at the line numbered ln.
type docReader struct {
	src []byte
	p   int
	ln  int
	out []byte

	ents  []docEntry // entries of the open mappings, innermost last
	buf   []byte     // the scalar being folded or unescaped
	tmp   []byte     // a mapping's entries while they are sorted
	node  yaml.Node  // a plain scalar being resolved
	depth int
	why   string

	endFrom, end int // lineEnd's last answer: src[endFrom:end] has no LF

	apiVersion, kind, name, namespace string
	rootLine, kindLine, nameLine      int
}

// docEntry is one entry of a mapping: its key and the span of
// `"key":value` in out.
type docEntry struct {
	key      []byte
	from, to int
}

// slot is where a value of interest goes: its text when it is a non-null
// scalar, its line, and the role of a mapping it is.
type slot struct {
	str  *string
	line *int
	role int
}

const (
	roleOther = iota
	roleRoot
	roleMeta
)

func (r *docReader) decline(why string) bool {
	if r.why == "" {
		r.why = why
	}
	return false
}

// document reads the whole text: one block mapping at column 0.
func (r *docReader) document() bool {
	if !docText(r.src) {
		return r.decline(declineText)
	}
	col := r.skipInsignificant()
	if col != 0 || isEntry(r.src, r.p, r.lineEnd(r.p)) {
		return r.decline(declineRoot)
	}
	r.rootLine = r.ln
	if !r.mapping(0, r.p, roleRoot) {
		return false
	}
	if r.p < len(r.src) {
		return r.decline(declineIndent)
	}
	return true
}

// docText: src is UTF-8 of characters yaml.v3 reads as they are (tab and
// LF the only controls; no NEL, LS, PS or BOM, which yaml.v3 reads as
// line breaks or skips), and no line is a document marker.
func docText(src []byte) bool {
	for i := 0; i < len(src); {
		if i == 0 || src[i-1] == '\n' {
			if rest := src[i:]; len(rest) >= 3 && (rest[0] == '-' || rest[0] == '.') && rest[1] == rest[0] && rest[2] == rest[0] &&
				(len(rest) == 3 || rest[3] == ' ' || rest[3] == '\t' || rest[3] == '\n') {
				return false
			}
		}
		// Eight bytes at a time while none is below 0x20 or above 0x7e.
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		for i+8 <= len(src) {
			w := binary.LittleEndian.Uint64(src[i:])
			if (w-ones*0x20)&^w&highs != 0 || ((w&^highs)+ones|w)&highs != 0 {
				break
			}
			i += 8
		}
		for i < len(src) && plainASCII[src[i]] {
			i++
		}
		if i == len(src) {
			break
		}
		c := src[i]
		if c < utf8.RuneSelf {
			if c != '\n' && c != '\t' {
				return false
			}
			i++
			continue
		}
		ch, size := utf8.DecodeRune(src[i:])
		switch {
		case ch == utf8.RuneError && size == 1, ch < 0xA0, ch == 0x2028, ch == 0x2029, ch == 0xFEFF,
			ch >= 0xD800 && ch < 0xE000, ch == 0xFFFE, ch == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

// plainASCII are the printable ASCII characters.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	return t
}()

// lineEnd is the index of the LF ending the line that holds p, or
// len(src); the last answer is kept, as a line is asked for several times.
func (r *docReader) lineEnd(p int) int {
	if p >= r.endFrom && p <= r.end && r.end > 0 {
		return r.end
	}
	e := len(r.src)
	if i := bytes.IndexByte(r.src[p:], '\n'); i >= 0 {
		e = p + i
	}
	r.endFrom, r.end = p, e
	return e
}

// nextLine moves to the start of the next line (len(src) at the last).
func (r *docReader) nextLine() {
	if e := r.lineEnd(r.p); e < len(r.src) {
		r.p = e + 1
	} else {
		r.p = len(r.src)
	}
	r.ln++
}

// skipInsignificant moves past blank and comment lines to the next line
// with content and returns its indentation, -1 at the end of the text or
// when it declines (a tab in the indentation).
func (r *docReader) skipInsignificant() int {
	for r.p < len(r.src) {
		i := r.p
		for i < len(r.src) && r.src[i] == ' ' {
			i++
		}
		switch {
		case i == len(r.src) || r.src[i] == '\n' || r.src[i] == '#':
			r.nextLine()
			continue
		case r.src[i] == '\t':
			r.decline(declineTab)
			return -1
		}
		return i - r.p
	}
	return -1
}

func (r *docReader) enter() bool {
	r.depth++
	return r.depth <= maxDocJSONDepth || r.decline(declineDepth)
}

// isEntry: a block sequence entry ("-" then a space or the line's end)
// starts at q.
func isEntry(src []byte, q, e int) bool {
	return q < e && src[q] == '-' && (q+1 == e || src[q+1] == ' ')
}

func skipSpaces(src []byte, i, e int) int {
	for i < e && src[i] == ' ' {
		i++
	}
	return i
}

// mapping reads a block mapping whose entries start at column indent, the
// first at at (on the current line).
func (r *docReader) mapping(indent, at, role int) bool {
	if !r.enter() {
		return false
	}
	defer func() { r.depth-- }()
	r.out = append(r.out, '{')
	base, start := len(r.ents), len(r.out)
	for {
		key, after, isKey := r.keyAt(at)
		if !isKey {
			return r.decline(declineKey)
		}
		if len(r.ents) > base {
			r.out = append(r.out, ',')
		}
		from := len(r.out)
		r.out = appendJSONString(r.out, key)
		r.out = append(r.out, ':')
		if !r.mapValue(indent, after, r.slotFor(role, key)) {
			return false
		}
		r.ents = append(r.ents, docEntry{key: key, from: from, to: len(r.out)})
		col := r.skipInsignificant()
		if r.why != "" {
			return false
		}
		if col < indent {
			break
		}
		if col > indent {
			return r.decline(declineIndent)
		}
		at = r.p + col
	}
	if !r.sortEntries(base, start) {
		return false
	}
	r.ents = r.ents[:base]
	r.out = append(r.out, '}')
	return true
}

// slotFor is where the value of key in a mapping of role goes.
func (r *docReader) slotFor(role int, key []byte) *slot {
	switch role {
	case roleRoot:
		switch string(key) {
		case "apiVersion":
			return &slot{str: &r.apiVersion, line: new(int)}
		case "kind":
			return &slot{str: &r.kind, line: &r.kindLine}
		case "metadata":
			return &slot{role: roleMeta}
		}
	case roleMeta:
		switch string(key) {
		case "name":
			return &slot{str: &r.name, line: &r.nameLine}
		case "namespace":
			return &slot{str: &r.namespace, line: new(int)}
		}
	}
	return nil
}

// sortEntries puts the entries of the mapping written from start in key
// order, as json.Marshal of a map writes them; a duplicate key declines.
func (r *docReader) sortEntries(base, start int) bool {
	es := r.ents[base:]
	sorted := true
	for i := 1; i < len(es); i++ {
		switch c := bytes.Compare(es[i-1].key, es[i].key); {
		case c == 0:
			return r.decline(declineDup)
		case c > 0:
			sorted = false
		}
	}
	if sorted {
		return true
	}
	slices.SortFunc(es, func(a, b docEntry) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(es); i++ {
		if bytes.Equal(es[i-1].key, es[i].key) {
			return r.decline(declineDup)
		}
	}
	r.tmp = append(r.tmp[:0], r.out[start:]...)
	r.out = r.out[:start]
	for i, e := range es {
		if i > 0 {
			r.out = append(r.out, ',')
		}
		r.out = append(r.out, r.tmp[e.from-start:e.to-start]...)
	}
	return true
}

// keyAt reads the key starting at q on the current line: its text, the
// index past its colon, and whether there is one (false, with why set, when
// it is one AppendDocJSON does not read).
func (r *docReader) keyAt(q int) (key []byte, after int, ok bool) {
	src, e := r.src, r.lineEnd(r.p)
	if q >= e {
		return nil, 0, false
	}
	switch c := src[q]; c {
	case '"', '\'':
		k, end, ok := r.quotedOnLine(q, e)
		if !ok || end >= e || src[end] != ':' || (end+1 < e && src[end+1] != ' ') {
			return nil, 0, false
		}
		return k, end + 1, true
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return nil, 0, false
	}
	for i := q; i < e; i++ {
		switch src[i] {
		case ':':
			if i+1 < e && src[i+1] != ' ' {
				continue
			}
			key = src[q:i]
			switch {
			case key[len(key)-1] == ' ':
				return nil, 0, r.decline(declineKeyKind)
			case len(key) > maxDocJSONKey:
				return nil, 0, r.decline(declineKeyKind)
			case !r.plainIsString(key):
				return nil, 0, r.decline(declineKeyKind)
			}
			return key, i + 1, true
		case '#':
			if src[i-1] == ' ' {
				return nil, 0, false
			}
		case '\t':
			return nil, 0, r.decline(declineTab)
		}
	}
	return nil, 0, false
}

// plainIsString: the plain scalar s resolves to a string. A plain scalar
// led by a letter resolves to one unless it is one of yaml.v3's bool or
// null words (resolve.go: a letter's hint sends it to resolveMap only);
// any other is resolved by yaml.v3. "<<" is a merge key and not read.
func (r *docReader) plainIsString(s []byte) bool {
	if len(s) > 0 && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') {
		switch string(s) {
		case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
			return false
		}
		return true
	}
	if string(s) == "<<" {
		return false
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: string(s)}
	return n.ShortTag() == "!!str"
}

// mapValue reads the value of a mapping entry whose colon ends before
// after, in a mapping at column indent.
func (r *docReader) mapValue(indent, after int, s *slot) bool {
	e := r.lineEnd(r.p)
	q := skipSpaces(r.src, after, e)
	if q < e && r.src[q] == '\t' {
		return r.decline(declineTab)
	}
	if q < e && r.src[q] != '#' {
		return r.inline(indent, q, s)
	}
	keyLine := r.ln
	r.nextLine()
	col := r.skipInsignificant()
	switch {
	case r.why != "":
		return false
	case col > indent:
		return r.block(indent, col, s)
	case col == indent && isEntry(r.src, r.p+col, r.lineEnd(r.p)):
		s.setLine(r.ln)
		return r.sequence(indent, true)
	}
	s.setLine(keyLine)
	r.out = append(r.out, "null"...)
	return true
}

func (s *slot) setLine(l int) {
	if s != nil && s.line != nil {
		*s.line = l
	}
}

func (s *slot) setStr(v []byte) {
	if s != nil && s.str != nil {
		*s.str = string(v)
	}
}

func (s *slot) childRole() int {
	if s == nil {
		return roleOther
	}
	return s.role
}

// block reads a value that starts a line of its own at column col, inside
// a collection at column parent.
func (r *docReader) block(parent, col int, s *slot) bool {
	at, e := r.p+col, r.lineEnd(r.p)
	s.setLine(r.ln)
	if isEntry(r.src, at, e) {
		return r.sequence(col, false)
	}
	if _, _, ok := r.keyAt(at); ok {
		return r.mapping(col, at, s.childRole())
	}
	if r.why != "" {
		return false
	}
	switch r.src[at] {
	case '|', '>', '[', '{':
		return r.decline(declineNode)
	}
	return r.inline(parent, at, s)
}

// sequence reads a block sequence whose entries start at column indent;
// an indentless one (at its key's column) ends at a line that is not an
// entry.
func (r *docReader) sequence(indent int, indentless bool) bool {
	if !r.enter() {
		return false
	}
	defer func() { r.depth-- }()
	r.out = append(r.out, '[')
	for first := true; ; first = false {
		if !first {
			r.out = append(r.out, ',')
		}
		e := r.lineEnd(r.p)
		after := r.p + indent + 1
		q := skipSpaces(r.src, after, e)
		switch {
		case q < e && r.src[q] == '\t':
			return r.decline(declineTab)
		case q == e || r.src[q] == '#':
			r.nextLine()
			col := r.skipInsignificant()
			switch {
			case r.why != "":
				return false
			case col > indent:
				if !r.block(indent, col, nil) {
					return false
				}
			default:
				r.out = append(r.out, "null"...)
			}
		case isEntry(r.src, q, e):
			return r.decline(declineNested)
		default:
			if _, _, ok := r.keyAt(q); ok {
				if !r.mapping(q-r.p, q, roleOther) {
					return false
				}
			} else if r.why != "" || !r.inline(indent, q, nil) {
				return false
			}
		}
		col := r.skipInsignificant()
		switch {
		case r.why != "":
			return false
		case col < indent:
			r.out = append(r.out, ']')
			return true
		case col > indent:
			return r.decline(declineIndent)
		case !isEntry(r.src, r.p+col, r.lineEnd(r.p)):
			if indentless {
				r.out = append(r.out, ']')
				return true
			}
			return r.decline(declineIndent)
		}
	}
}

// inline reads a scalar or flow collection starting at q on the current
// line, inside a collection at column parent, and moves past its last
// line.
func (r *docReader) inline(parent, q int, s *slot) bool {
	src, e := r.src, r.lineEnd(r.p)
	switch c := src[q]; c {
	case '|', '>':
		return r.blockScalar(parent, q, s)
	case '"', '\'':
		return r.quoted(parent, q, s)
	case '[', '{':
		return r.flow(q, e, s)
	case '&', '*', '!', '%', '@', '`', ',', ']', '}', '#', '?', ':':
		return r.decline(declineNode)
	case '-':
		if q+1 == e || src[q+1] == ' ' {
			return r.decline(declineNested)
		}
	}
	return r.plain(parent, q, s)
}

// plainLine scans a plain scalar's text on one line from q to e: the end
// of its text (trailing spaces dropped) and whether a comment ends it.
func (r *docReader) plainLine(q, e int) (end int, comment, ok bool) {
	src := r.src
	end = q
	for i := q; i < e; i++ {
		switch src[i] {
		case ' ':
			continue
		case ':':
			if i+1 == e || src[i+1] == ' ' {
				return 0, false, r.decline(declineColon)
			}
		case '#':
			if i > q && src[i-1] == ' ' {
				return end, true, true
			}
		case '\t':
			return 0, false, r.decline(declineTab)
		}
		end = i + 1
	}
	return end, false, true
}

// plain reads a plain scalar starting at q, folded over the lines below
// that are indented past parent, as yaml.v3 folds it: a line break
// between two lines is a space, n blank lines between them n line breaks,
// and spaces around breaks go.
func (r *docReader) plain(parent, q int, s *slot) bool {
	line := r.ln
	end, comment, ok := r.plainLine(q, r.lineEnd(r.p))
	if !ok {
		return false
	}
	text := r.src[q:end]
	r.nextLine()
	if comment {
		return r.emitPlain(text, line, s)
	}
	multi := false
	for blanks := 0; r.p < len(r.src); {
		i := skipSpaces(r.src, r.p, len(r.src))
		if i == len(r.src) {
			break
		}
		if r.src[i] == '\n' {
			blanks++
			r.nextLine()
			continue
		}
		if r.src[i] == '\t' {
			return r.decline(declineTab)
		}
		if i-r.p <= parent || r.src[i] == '#' {
			break
		}
		e := r.lineEnd(r.p)
		end, comment, ok := r.plainLine(i, e)
		if !ok {
			return false
		}
		if !multi {
			r.buf = append(r.buf[:0], text...)
			multi = true
		}
		if blanks == 0 {
			r.buf = append(r.buf, ' ')
		}
		for ; blanks > 0; blanks-- {
			r.buf = append(r.buf, '\n')
		}
		r.buf = append(r.buf, r.src[i:end]...)
		r.nextLine()
		if comment {
			break
		}
	}
	if multi {
		text = r.buf
	}
	return r.emitPlain(text, line, s)
}

// emitPlain writes the plain scalar text at line as JSON writes its node.
func (r *docReader) emitPlain(text []byte, line int, s *slot) bool {
	s.setLine(line)
	if len(text) > 0 && (text[0]|0x20 >= 'a' && text[0]|0x20 <= 'z') && r.plainIsString(text) {
		r.out = appendJSONString(r.out, text)
		s.setStr(text)
		return true
	}
	if string(text) == "<<" {
		return r.decline(declineNode)
	}
	r.node = yaml.Node{Kind: yaml.ScalarNode, Value: string(text)}
	r.node.Tag = r.node.ShortTag()
	w := jsonWriter{buf: r.out}
	if w.scalar(&r.node) != jsonDone {
		return r.decline(declineScalar)
	}
	r.out = w.buf
	if r.node.Tag != "!!null" {
		s.setStr(text)
	}
	return true
}

// emitString writes a quoted or block scalar's text at line.
func (r *docReader) emitString(text []byte, line int, s *slot) {
	s.setLine(line)
	s.setStr(text)
	r.out = appendJSONString(r.out, text)
}

// afterValue checks that only spaces and a comment follow a value ending
// before i on the current line, and moves to the next line.
func (r *docReader) afterValue(i int) bool {
	e := r.lineEnd(r.p)
	j := skipSpaces(r.src, i, e)
	if j < e && (r.src[j] != '#' || j == i) {
		if r.src[j] == '\t' {
			return r.decline(declineTab)
		}
		return r.decline(declineTrailing)
	}
	r.nextLine()
	return true
}

// quoted reads a single- or double-quoted scalar starting at q, also over
// several lines (each indented past parent), folded as yaml.v3 folds it.
func (r *docReader) quoted(parent, q int, s *slot) bool {
	line := r.ln
	text, end, ok := r.quotedText(parent, q)
	if !ok {
		return r.decline(declineQuoted)
	}
	if !r.afterValue(end) {
		return false
	}
	r.emitString(text, line, s)
	return true
}

// quotedOnLine reads a quoted scalar that starts at q and closes on the
// same line (before e): its text and the index past its closing quote;
// false when it does not close there. The text is src's own bytes when
// nothing in it is escaped.
func (r *docReader) quotedOnLine(q, e int) (text []byte, end int, ok bool) {
	src, quote := r.src, r.src[q]
	for i := q + 1; i < e; i++ {
		switch c := src[i]; {
		case c == '\t':
			return nil, 0, r.decline(declineTab)
		case c == '\\' && quote == '"', c == '\'' && quote == '\'' && i+1 < e && src[i+1] == '\'':
			return r.quotedEscapedOnLine(q, e)
		case c == quote:
			return src[q+1 : i], i + 1, true
		}
	}
	return nil, 0, false
}

// quotedEscapedOnLine is quotedOnLine of a scalar with escapes: its text
// is a copy.
func (r *docReader) quotedEscapedOnLine(q, e int) ([]byte, int, bool) {
	p, ln := r.p, r.ln
	t, end, ok := r.quotedText(-1, q)
	crossed := r.p != p
	r.p, r.ln = p, ln
	if !ok || crossed || end > e {
		return nil, 0, false
	}
	return bytes.Clone(t), end, true
}

// quotedText unescapes and folds the quoted scalar starting at q on the
// current line into r.buf and returns it with the index past the closing
// quote; the closing quote's line becomes the current one. A continuation
// line must be indented past parent.
func (r *docReader) quotedText(parent, q int) ([]byte, int, bool) {
	src, double := r.src, r.src[q] == '"'
	r.buf = r.buf[:0]
	i := q + 1
	for {
		// The characters up to a blank or the closing quote.
		escapedBreak := false
	chars:
		for i < len(src) && src[i] != ' ' && src[i] != '\n' {
			c := src[i]
			switch {
			case c == '\t':
				return nil, 0, false
			case !double && c == '\'':
				if i+1 < len(src) && src[i+1] == '\'' {
					r.buf = append(r.buf, '\'')
					i += 2
					continue
				}
				return r.buf, i + 1, true
			case double && c == '"':
				return r.buf, i + 1, true
			case double && c == '\\':
				if i+1 < len(src) && src[i+1] == '\n' {
					i += 2
					r.p, r.ln = i, r.ln+1
					escapedBreak = true
					break chars
				}
				n, ok := r.escape(i)
				if !ok {
					return nil, 0, false
				}
				i += n
			default:
				r.buf = append(r.buf, c)
				i++
			}
		}
		if i == len(src) {
			return nil, 0, false
		}
		// Blanks and line breaks, folded.
		spaces, breaks, leadingBreak := 0, 0, false
		for i < len(src) && (src[i] == ' ' || src[i] == '\n') {
			if src[i] == ' ' {
				if !escapedBreak && !leadingBreak {
					spaces++
				}
				i++
				continue
			}
			if !escapedBreak && !leadingBreak {
				spaces, leadingBreak = 0, true
			} else {
				breaks++
			}
			i++
			r.p, r.ln = i, r.ln+1
		}
		if i < len(src) && src[i] == '\t' {
			return nil, 0, false
		}
		if (escapedBreak || leadingBreak) && i < len(src) && i-r.p <= parent {
			return nil, 0, false
		}
		switch {
		case leadingBreak && breaks == 0:
			r.buf = append(r.buf, ' ')
		case leadingBreak || escapedBreak:
			for ; breaks > 0; breaks-- {
				r.buf = append(r.buf, '\n')
			}
		default:
			for ; spaces > 0; spaces-- {
				r.buf = append(r.buf, ' ')
			}
		}
	}
}

// escape appends the character the escape at i stands for (yaml.v3's
// escapes) and returns the escape's length.
func (r *docReader) escape(i int) (int, bool) {
	src := r.src
	if i+1 >= len(src) {
		return 0, false
	}
	var b byte
	code := 0
	switch src[i+1] {
	case '0':
		b = 0
	case 'a':
		b = '\a'
	case 'b':
		b = '\b'
	case 't':
		b = '\t'
	case 'n':
		b = '\n'
	case 'v':
		b = '\v'
	case 'f':
		b = '\f'
	case 'r':
		b = '\r'
	case 'e':
		b = 0x1b
	case ' ', '"', '\'', '\\':
		b = src[i+1]
	case 'N':
		r.buf = utf8.AppendRune(r.buf, 0x85)
		return 2, true
	case '_':
		r.buf = utf8.AppendRune(r.buf, 0xA0)
		return 2, true
	case 'L':
		r.buf = utf8.AppendRune(r.buf, 0x2028)
		return 2, true
	case 'P':
		r.buf = utf8.AppendRune(r.buf, 0x2029)
		return 2, true
	case 'x':
		code = 2
	case 'u':
		code = 4
	case 'U':
		code = 8
	default:
		return 0, false
	}
	if code == 0 {
		r.buf = append(r.buf, b)
		return 2, true
	}
	if i+2+code > len(src) {
		return 0, false
	}
	v := 0
	for _, h := range src[i+2 : i+2+code] {
		switch {
		case h >= '0' && h <= '9':
			v = v<<4 | int(h-'0')
		case h|0x20 >= 'a' && h|0x20 <= 'f':
			v = v<<4 | int(h|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	if (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF {
		return 0, false
	}
	r.buf = utf8.AppendRune(r.buf, rune(v))
	return 2 + code, true
}

// blockScalar reads a literal or folded block scalar whose header starts
// at q, inside a collection at column parent, as yaml.v3 scans it.
func (r *docReader) blockScalar(parent, q int, s *slot) bool {
	src, e, line := r.src, r.lineEnd(r.p), r.ln
	literal := src[q] == '|'
	i := q + 1
	chomp, inc := 0, 0
	for k := 0; k < 2 && i < e; k++ {
		switch c := src[i]; {
		case (c == '+' || c == '-') && chomp == 0:
			chomp = 1
			if c == '-' {
				chomp = -1
			}
			i++
		case c >= '1' && c <= '9' && inc == 0:
			inc = int(c - '0')
			i++
		}
	}
	j := skipSpaces(src, i, e)
	if j < e && (src[j] != '#' || j == i) {
		return r.decline(declineBlock)
	}
	r.nextLine()
	indent := 0
	if inc > 0 {
		indent = parent + inc
	}
	r.buf = r.buf[:0]
	i, ls := r.p, r.p // ls: the start of i's line
	trailing := 0
	// breaks eats indentation and empty lines, fixing indent if unset.
	breaks := func() bool {
		maxIndent := 0
		for {
			for (indent == 0 || i-ls < indent) && i < len(src) && src[i] == ' ' {
				i++
			}
			maxIndent = max(maxIndent, i-ls)
			if (indent == 0 || i-ls < indent) && i < len(src) && src[i] == '\t' {
				return r.decline(declineTab)
			}
			if i == len(src) || src[i] != '\n' {
				break
			}
			trailing++
			i++
			ls = i
			r.ln++
		}
		if indent == 0 {
			indent = max(maxIndent, parent+1, 1)
		}
		return true
	}
	if !breaks() {
		return false
	}
	leadingBreak, leadingBlank := false, false
	for i-ls == indent && i < len(src) {
		trailingBlank := src[i] == ' ' || src[i] == '\t'
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if trailing == 0 {
				r.buf = append(r.buf, ' ')
			}
		} else if leadingBreak {
			r.buf = append(r.buf, '\n')
		}
		leadingBreak = false
		for ; trailing > 0; trailing-- {
			r.buf = append(r.buf, '\n')
		}
		leadingBlank = trailingBlank
		le := r.lineEnd(i)
		r.buf = append(r.buf, src[i:le]...)
		i = le
		if i < len(src) {
			leadingBreak = true
			i++
			ls = i
			r.ln++
		}
		if !breaks() {
			return false
		}
	}
	if chomp != -1 && leadingBreak {
		r.buf = append(r.buf, '\n')
	}
	if chomp == 1 {
		for ; trailing > 0; trailing-- {
			r.buf = append(r.buf, '\n')
		}
	}
	r.p = ls
	if i == len(src) {
		r.p = len(src)
	}
	r.emitString(r.buf, line, s)
	return true
}

// flow reads an empty flow mapping or a flow sequence of scalars on one
// line, starting at q.
func (r *docReader) flow(q, e int, s *slot) bool {
	src := r.src
	s.setLine(r.ln)
	if !r.enter() {
		return false
	}
	r.depth--
	if src[q] == '{' {
		j := skipSpaces(src, q+1, e)
		if j == e || src[j] != '}' {
			return r.decline(declineFlow)
		}
		r.out = append(r.out, "{}"...)
		return r.afterValue(j + 1)
	}
	r.out = append(r.out, '[')
	i := skipSpaces(src, q+1, e)
	for n := 0; ; n++ {
		if i < e && src[i] == ']' && n == 0 {
			break
		}
		if n > 0 {
			r.out = append(r.out, ',')
		}
		switch {
		case i == e:
			return r.decline(declineFlow)
		case src[i] == '"' || src[i] == '\'':
			text, end, ok := r.quotedOnLine(i, e)
			if !ok {
				return r.decline(declineFlow)
			}
			r.out = appendJSONString(r.out, text)
			i = end
		default:
			j := i
			for j < e && flowPlainChar(src[j]) {
				j++
			}
			if j == i || src[i] == '-' && j == i+1 {
				return r.decline(declineFlow)
			}
			if !r.emitPlain(src[i:j], r.ln, nil) {
				return false
			}
			i = j
		}
		i = skipSpaces(src, i, e)
		if i < e && src[i] == ',' {
			i = skipSpaces(src, i+1, e)
			continue
		}
		if i < e && src[i] == ']' {
			break
		}
		return r.decline(declineFlow)
	}
	r.out = append(r.out, ']')
	return r.afterValue(i + 1)
}

// flowPlainChar: c may be part of a plain scalar AppendDocJSON reads in a flow
// sequence.
func flowPlainChar(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' || c == '-' || c == '_' || c == '.' || c == '/' || c == '+' || c == '~'
}
