package server

import (
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
	up := regexp.QuoteMeta(string(filepath.Separator) + "uploads" + string(filepath.Separator))
	re := regexp.MustCompile(`(?:` + strings.Join(alts, "|") + `)(` + up + `verify-[^/\s"'\\:,;)]*)?`)
	return &pathScrubber{re: re}
}

// scrub replaces the data directory in b.
func (p *pathScrubber) scrub(b []byte) []byte {
	if p == nil {
		return b
	}
	return p.re.ReplaceAllFunc(b, func(m []byte) []byte {
		if sm := p.re.FindSubmatch(m); sm != nil && len(sm[1]) > 0 {
			return []byte("upload")
		}
		return []byte("[dataDir]")
	})
}
