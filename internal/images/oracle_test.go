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
	// started: the document's first content line was seen.
	workload, tooLong, other, started, sawKind := false, false, false, false, false
	kind := "" // the document's top-level kind, for OversizeError
	flush := func() {
		kindless := started && !sawKind && !workload
		if (workload || kindless) && !tooLong {
			f, err := scanDoc(cur.Bytes(), start)
			out = append(out, f...)
			if err != nil && !kindless {
				errs = append(errs, err)
			}
		} else if (workload || kindless) && tooLong {
			errs = append(errs, &OversizeError{Line: start, Kind: kind, Limit: maxDoc})
		}
		cur.Reset()
		workload, tooLong, other, started, sawKind = false, false, false, false, false
		kind = ""
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
			} else {
				if k, ok := topKind(l); ok {
					kind, sawKind = k, true
					workload = mayRunContainers(k)
					// A document has one top-level kind: the rest of one
					// that runs no container (a CRD, most of a components
					// file) need not be kept.
					other = !workload
				} else if !started {
					if t := bytes.TrimLeft(l, " \t\r\n"); len(t) > 0 && t[0] != '#' {
						started = true
						// A JSON document (kubectl -o json, some
						// generators): parsed, and scanDoc reads its kind.
						workload = workload || t[0] == '{'
					}
				}
				if other {
					cur.Reset()
				} else if cur.Len()+len(l) <= maxDoc {
					cur.Write(l)
				} else {
					tooLong = true
				}
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
