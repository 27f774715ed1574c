package server

import (
	"bytes"
	"errors"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// What a client sees of the server's own trouble: a full disk is the
// server's fault (507 with Retry-After, never 400), and no answer names a
// path under the data directory (an upload's extraction directory reads
// "upload", anything else under it "[dataDir]/…").

// retryAfterStorage is the Retry-After (seconds) of a 507.
const retryAfterStorage = "30"

// isNoSpace reports whether err is a write refused for want of room: the
// file system is full (ENOSPC), a quota is reached (EDQUOT), or a file size
// limit is (EFBIG).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// insufficientStorage answers 507: the server has no room for what the
// request needs stored.
func (s *Server) insufficientStorage(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.Error("out of disk space", "method", r.Method, "path", r.URL.Path, "what", what, "err", err)
	w.Header().Set("Retry-After", retryAfterStorage)
	s.writeError(w, r, http.StatusInsufficientStorage, what+": the server has no room to store it (its disk is full); retry later")
}

// pathScrubber takes the data directory out of client-visible text.
type pathScrubber struct{ re *regexp.Regexp }

// newPathScrubber matches dataDir as given, absolute and with its
// symbolic links resolved.
func newPathScrubber(dataDir string) *pathScrubber {
	forms := map[string]bool{}
	add := func(p string) {
		if p = filepath.Clean(p); p != "." && p != "/" && p != "" {
			forms[p] = true
		}
	}
	add(dataDir)
	if abs, err := filepath.Abs(dataDir); err == nil {
		add(abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			add(real)
		}
	}
	var alts []string
	for p := range forms {
		alts = append(alts, regexp.QuoteMeta(p))
	}
	// Longest first: one form may be a prefix of another.
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	sep := regexp.QuoteMeta(string(filepath.Separator))
	re := regexp.MustCompile(`(?:` + strings.Join(alts, "|") + `)(` + sep + `uploads` + sep + `verify-[^/\s"'\\:,;)]*|` + sep + `(?:uploads|git)` + sep + `)?`)
	return &pathScrubber{re: re}
}

// pathByte reports whether c may continue a path element: a data
// directory "/data" is not found in "/srv/data" or "/database".
func pathByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// scrub replaces the data directory in b: an upload's tree by "upload",
// anything else under it by "[dataDir]". With all unset only paths under
// the directories the service itself makes there (uploads, git
// checkouts) are replaced, so that a report quoting a path of the files
// checked that happens to start like dataDir is left as it is; errors
// (all set) have every mention replaced.
func (p *pathScrubber) scrub(b []byte, all bool) []byte {
	if p == nil {
		return b
	}
	var out []byte
	last := 0
	for _, m := range p.re.FindAllSubmatchIndex(b, -1) {
		start, end, sub := m[0], m[1], m[2] >= 0 && m[3] > m[2]
		if start > 0 && (pathByte(b[start-1]) || b[start-1] == filepath.Separator) {
			continue // inside a longer path
		}
		if !sub && (!all || end < len(b) && pathByte(b[end])) {
			continue
		}
		out = append(out, b[last:start]...)
		switch {
		case sub && bytes.Contains(b[m[2]:m[3]], []byte("verify-")):
			out = append(out, "upload"...)
		case sub:
			out = append(out, "[dataDir]"...)
			out = append(out, b[m[2]:m[3]]...)
		default:
			out = append(out, "[dataDir]"...)
		}
		last = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
