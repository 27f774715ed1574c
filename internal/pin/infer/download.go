package infer

import (
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/pkg/pin"
)

// download is one URL a shell command (curl or wget) fetches.
type download struct {
	URL string // may hold unresolved $(…) / ${…} / $VAR text
	To  string // clean package-relative path it is written to, "" if unknown
}

// known reports whether the URL is fully resolved (no variable, no command
// substitution left in it).
func (d download) known() bool { return !strings.Contains(d.URL, "$") }

var alnumRunRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9A-Za-z]+`) })

// hexDigests returns the distinct 64-hex-digit words in s, lowercased, in
// order of appearance.
func hexDigests(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range alnumRunRE().FindAllString(s, -1) {
		if len(w) != 64 || !isHex(w) {
			continue
		}
		w = strings.ToLower(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// normalizeDigest returns the lowercase hex of a SHA-256 written as 64 hex
// digits, optionally prefixed "sha256:", or "" if s is not one.
func normalizeDigest(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 7 && strings.EqualFold(s[:7], "sha256:") {
		s = s[7:]
	}
	if len(s) != 64 || !isHex(s) {
		return ""
	}
	return strings.ToLower(s)
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// shellWords splits a shell command line into segments (at unquoted ;, &&,
// ||, | and newlines) of words, with quotes removed. A $(…) or ${…} group
// stays inside one word. Each segment records whether a pipe follows it.
type segment struct {
	words []string
	piped bool // the segment's output goes into a pipe
}

func shellSegments(s string) []segment {
	l := &shellLexer{s: s}
	for ; l.i < len(s); l.i++ {
		l.step()
	}
	l.flushSeg(false)
	return l.segs
}

// shellLexer is shellSegments' state: the segments so far, the words of
// the current one and the word being read.
type shellLexer struct {
	s      string
	i      int
	segs   []segment
	words  []string
	w      strings.Builder
	inWord bool
}

func (l *shellLexer) flushWord() {
	if l.inWord {
		l.words = append(l.words, l.w.String())
		l.w.Reset()
		l.inWord = false
	}
}

func (l *shellLexer) flushSeg(piped bool) {
	l.flushWord()
	if len(l.words) > 0 {
		l.segs = append(l.segs, segment{words: l.words, piped: piped})
	}
	l.words = nil
}

// step reads the byte at l.i (and what it opens), leaving l.i on the last
// byte it consumed.
func (l *shellLexer) step() {
	s, c := l.s, l.s[l.i]
	switch c {
	case '\'':
		l.inWord = true
		j := strings.IndexByte(s[l.i+1:], '\'')
		if j < 0 {
			l.w.WriteString(s[l.i+1:])
			l.i = len(s)
			return
		}
		l.w.WriteString(s[l.i+1 : l.i+1+j])
		l.i += j + 1
	case '"':
		l.inWord = true
		l.doubleQuoted()
	case '\\':
		l.inWord = true
		if l.i+1 < len(s) {
			l.i++
			if s[l.i] != '\n' {
				l.w.WriteByte(s[l.i])
			}
		}
	case '$':
		l.inWord = true
		n := groupEnd(s, l.i)
		l.w.WriteString(s[l.i:n])
		l.i = n - 1
	default:
		l.operator(c)
	}
}

// doubleQuoted reads a "…" string starting at l.i into the current word;
// a $ group inside it is kept whole.
func (l *shellLexer) doubleQuoted() {
	s := l.s
	for l.i++; l.i < len(s) && s[l.i] != '"'; l.i++ {
		if s[l.i] == '\\' && l.i+1 < len(s) && strings.IndexByte("\"\\$`", s[l.i+1]) >= 0 {
			l.i++
		}
		if s[l.i] == '$' {
			n := groupEnd(s, l.i)
			l.w.WriteString(s[l.i:n])
			l.i = n - 1
			continue
		}
		l.w.WriteByte(s[l.i])
	}
}

// operator handles an unquoted byte: a blank ends the word, a separator
// the segment, a redirection is a word of its own; other bytes belong to
// the word.
func (l *shellLexer) operator(c byte) {
	s := l.s
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		l.flushWord()
	case c == '\n' || c == ';':
		l.flushSeg(false)
	case c == '&' && l.i+1 < len(s) && s[l.i+1] == '&':
		l.flushSeg(false)
		l.i++
	case c == '|' && l.i+1 < len(s) && s[l.i+1] == '|':
		l.flushSeg(false)
		l.i++
	case c == '|':
		l.flushSeg(true)
	case c == '>':
		// A redirection is its own word: ">", ">>" then the target.
		l.flushWord()
		op := ">"
		if l.i+1 < len(s) && s[l.i+1] == '>' {
			op = ">>"
			l.i++
		}
		l.words = append(l.words, op)
	case c == '<' || c == '(' || c == ')' || c == '`':
		l.flushWord()
	default:
		l.inWord = true
		l.w.WriteByte(c)
	}
}

// groupEnd returns the index just past a $(…), ${…}, $NAME or $x starting
// at s[i] == '$'.
func groupEnd(s string, i int) int {
	if i+1 >= len(s) {
		return i + 1
	}
	open := s[i+1]
	var closeCh byte
	switch open {
	case '(':
		closeCh = ')'
	case '{':
		closeCh = '}'
	default:
		j := i + 1
		for j < len(s) && (s[j] == '_' || 'A' <= s[j] && s[j] <= 'Z' || 'a' <= s[j] && s[j] <= 'z' || '0' <= s[j] && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			return i + 2
		}
		return j
	}
	depth := 0
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case closeCh:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// curl short options that take an argument (the rest of a cluster, or the
// next word, is that argument).
const curlArgFlags = "oHdDuxAeXTwKrmbcEFCyYztUPQ"

// wget short options that take an argument.
const wgetArgFlags = "OPoaietTwQUlABDIXRe"

// findDownloads returns what curl and wget commands in the shell text s
// fetch, and where they write it, and the release assets `gh release
// download` and `kubectl operator preload -u` fetch (where these write is
// not followed: they never write a package's vendored file by name).
func findDownloads(s string) []download {
	var out []download
	for _, seg := range shellSegments(s) {
		for i, word := range seg.words {
			base, rest := path.Base(word), seg.words[i+1:]
			switch {
			case base == "curl" || base == "wget":
				out = append(out, parseFetchCommand(base, rest, seg.piped)...)
			case base == "gh" && len(rest) >= 2 && rest[0] == "release" && rest[1] == "download":
				out = append(out, ghReleaseDownload(rest[2:])...)
			case base == "kubectl" && len(rest) >= 2 && rest[0] == "operator" && rest[1] == "preload":
				out = append(out, preloadURLs(rest[2:])...)
			case base == "kubectl-operator" && len(rest) >= 1 && rest[0] == "preload":
				out = append(out, preloadURLs(rest[1:])...)
			default:
				continue
			}
			break
		}
	}
	return out
}

// preloadURLs are the URLs `kubectl operator preload` reads
// (-u/--url, cluster-api-operator cmd/plugin/cmd/preload.go): it fetches
// each and prints the provider's ConfigMap.
func preloadURLs(args []string) []download {
	var out []download
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-u" || a == "--url") && i+1 < len(args):
			i++
			out = append(out, download{URL: args[i]})
		case strings.HasPrefix(a, "--url="):
			out = append(out, download{URL: strings.TrimPrefix(a, "--url=")})
		case strings.HasPrefix(a, "-u") && len(a) > 2:
			out = append(out, download{URL: a[2:]})
		}
	}
	return out
}

// ghReleaseDownload is what `gh release download [TAG] [-R OWNER/REPO]
// [-p PATTERN]...` fetches, as the release asset URLs it resolves to
// (github.com/OWNER/REPO/releases/download/TAG/PATTERN; "*" for every
// asset, "latest" with no tag, OWNER/REPO left as a variable when the
// repository is the checkout's own).
func ghReleaseDownload(args []string) []download {
	tag, repo := "", "${GH_REPO}"
	var patterns []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if k := strings.IndexByte(a, '='); k > 0 && strings.HasPrefix(a, "--") {
				return a[k+1:]
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-R" || a == "--repo" || strings.HasPrefix(a, "--repo="):
			repo = val()
		case a == "-p" || a == "--pattern" || strings.HasPrefix(a, "--pattern="):
			patterns = append(patterns, val())
		case a == "-D" || a == "--dir" || a == "-O" || a == "--output" || a == "-A" || a == "--archive" ||
			strings.HasPrefix(a, "--dir=") || strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--archive="):
			val()
		case strings.HasPrefix(a, "-"):
		case tag == "":
			tag = a
		}
	}
	if tag == "" {
		tag = "latest"
	}
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	out := make([]download, len(patterns))
	for i, p := range patterns {
		out[i].URL = "https://github.com/" + repo + "/releases/download/" + tag + "/" + p
	}
	return out
}

// isComponentsRelease reports whether u (which may hold unresolved
// variables) fetches a provider's components or metadata from a
// release: a YAML file whose name says components, or any YAML asset of a
// GitHub release (a glob of every asset included). Binaries and archives
// of tools fetched from releases are not.
func isComponentsRelease(u string) bool {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	base := strings.ToLower(path.Base(u))
	yaml := strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") || base == "*"
	if !yaml {
		return false
	}
	return strings.Contains(base, "components") || strings.Contains(u, "github.com/") && strings.Contains(u, "/releases/")
}

func parseFetchCommand(cmd string, args []string, piped bool) []download {
	f := &fetchArgs{cmd: cmd, args: args, remoteName: cmd == "wget", argFlags: curlArgFlags}
	if cmd == "wget" {
		f.argFlags = wgetArgFlags
	}
	for f.i = 0; f.i < len(args); f.i++ {
		f.arg(args[f.i])
	}
	return f.downloads(piped)
}

// fetchArgs is what parseFetchCommand learns from a curl or wget command's
// arguments.
type fetchArgs struct {
	cmd, argFlags           string
	args                    []string
	i                       int
	urls                    []string
	to, redirect, dirPrefix string
	remoteName              bool
}

// next consumes and returns the argument after the current one.
func (f *fetchArgs) next() string {
	if f.i+1 < len(f.args) {
		f.i++
		return f.args[f.i]
	}
	return ""
}

func (f *fetchArgs) setOut(flag byte, v string) {
	switch {
	case f.cmd == "curl" && flag == 'o', f.cmd == "wget" && flag == 'O':
		f.to = v
	case f.cmd == "wget" && flag == 'P':
		f.dirPrefix = v
	}
}

func (f *fetchArgs) arg(a string) {
	cmd := f.cmd
	switch {
	case a == ">" || a == ">>":
		f.redirect = f.next()
	case a == "--output" && cmd == "curl", a == "--output-document" && cmd == "wget":
		f.to = f.next()
	case strings.HasPrefix(a, "--output=") && cmd == "curl":
		f.to = strings.TrimPrefix(a, "--output=")
	case strings.HasPrefix(a, "--output-document=") && cmd == "wget":
		f.to = strings.TrimPrefix(a, "--output-document=")
	case a == "--directory-prefix" && cmd == "wget":
		f.dirPrefix = f.next()
	case strings.HasPrefix(a, "--directory-prefix=") && cmd == "wget":
		f.dirPrefix = strings.TrimPrefix(a, "--directory-prefix=")
	case a == "--remote-name" && cmd == "curl":
		f.remoteName = true
	case a == "--url":
		f.urls = append(f.urls, f.next())
	case strings.HasPrefix(a, "--"):
		// Long options with a separate value are rare in fetch lines;
		// a following URL is still found below.
	case len(a) > 1 && a[0] == '-':
		f.shortFlags(a)
	case isHTTPURL(a):
		f.urls = append(f.urls, a)
	}
}

// shortFlags reads a cluster of short options (-sSLo file, -Ofile).
func (f *fetchArgs) shortFlags(a string) {
	for k := 1; k < len(a); k++ {
		fl := a[k]
		if f.cmd == "curl" && fl == 'O' {
			f.remoteName = true
			continue
		}
		if strings.IndexByte(f.argFlags, fl) >= 0 {
			v := a[k+1:]
			if v == "" {
				v = f.next()
			}
			f.setOut(fl, v)
			return
		}
	}
}

// downloads is the result: each URL, and where it is written when the
// command fetches exactly one.
func (f *fetchArgs) downloads(piped bool) []download {
	urls, to := f.urls, f.to
	if len(urls) == 0 {
		return nil
	}
	if to == "-" || to == "" && !f.remoteName {
		to = ""
		if !piped {
			to = f.redirect
		}
	}
	out := make([]download, len(urls))
	for i, u := range urls {
		out[i].URL = u
		if len(urls) != 1 {
			continue
		}
		t := to
		if t == "" && f.remoteName && !piped {
			if pu, err := url.Parse(u); err == nil && pu.Path != "" && !strings.HasSuffix(pu.Path, "/") {
				t = path.Join(f.dirPrefix, path.Base(pu.Path))
			}
		}
		out[i].To = cleanRelPath(t)
	}
	return out
}

// cleanRelPath returns p as a clean package-relative path, or "" when it is
// not one (absolute, outside, unresolved).
func cleanRelPath(p string) string {
	if p == "" || strings.Contains(p, "$") {
		return ""
	}
	p = path.Clean(p)
	if pin.CheckPath(p) != nil {
		return ""
	}
	return p
}
