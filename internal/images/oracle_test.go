package images

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/pinseal/pinseal/internal/yamldoc"
)

// scanLines is the line-by-line scanner Scan replaced, kept as the oracle
// Scan and ScanBytes must agree with.
func scanLines(r io.Reader) ([]Found, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Found
	var errs []error
	var cur bytes.Buffer
	start, line := 1, 0
	var d docState
	tooLong := false
	keep := func(l []byte) {
		if cur.Len()+len(l) <= maxDoc && !tooLong {
			cur.Write(l)
		} else {
			tooLong = true
		}
	}
	flush := func() {
		if d.mustParse() || d.kindless() {
			if tooLong {
				errs = append(errs, &OversizeError{Line: start, Kind: d.kind, Limit: maxDoc})
			} else {
				f, err := readDoc(cur.Bytes(), start, d.kind)
				out = append(out, f...)
				if err != nil && (d.mustParse() || isProblem(err)) {
					errs = append(errs, err)
				}
			}
		}
		cur.Reset()
		d, tooLong = docState{}, false
		start = line + 1
	}
	for {
		l, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A very long line (a base64 blob in a Secret): keep reading it.
			rest := append([]byte(nil), l...)
			for errors.Is(err, bufio.ErrBufferFull) {
				l, err = br.ReadSlice('\n')
				rest = append(rest, l...)
			}
			l = rest
		}
		if len(l) > 0 {
			line++
			if yamldoc.Marker(l) != "" {
				flush()
				if markerContent(l) {
					start = line
					d.started, d.inexact = true, true
					keep(l)
				}
			} else {
				d.read(l)
				keep(l)
			}
		}
		if err != nil {
			line++
			flush()
			if err != io.EOF {
				errs = append(errs, err)
			}
			return out, errors.Join(errs...)
		}
	}
}
