package infer

import (
	"net/url"
	"path"
	"regexp"
	"strings"

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

var alnumRunRE = regexp.MustCompile(`[0-9A-Za-z]+`)

// hexDigests returns the distinct 64-hex-digit words in s, lowercased, in
// order of appearance.
func hexDigests(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range alnumRunRE.FindAllString(s, -1) {
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
	var segs []segment
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushSeg := func(piped bool) {
		flushWord()
		if len(words) > 0 {
			segs = append(segs, segment{words: words, piped: piped})
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				w.WriteString(s[i+1:])
				i = len(s)
				break
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				if s[i] == '$' {
					n := groupEnd(s, i)
					w.WriteString(s[i:n])
					i = n - 1
					continue
				}
				w.WriteByte(s[i])
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			}
		case c == '$':
			inWord = true
			n := groupEnd(s, i)
			w.WriteString(s[i:n])
			i = n - 1
		case c == ' ' || c == '\t' || c == '\r':
			flushWord()
		case c == '\n' || c == ';':
			flushSeg(false)
		case c == '&' && i+1 < len(s) && s[i+1] == '&':
			flushSeg(false)
			i++
		case c == '|' && i+1 < len(s) && s[i+1] == '|':
			flushSeg(false)
			i++
		case c == '|':
			flushSeg(true)
		case c == '>':
			// A redirection is its own word: ">", ">>" then the target.
			flushWord()
			op := ">"
			if i+1 < len(s) && s[i+1] == '>' {
				op = ">>"
				i++
			}
			words = append(words, op)
		case c == '<' || c == '(' || c == ')' || c == '`':
			flushWord()
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flushSeg(false)
	return segs
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
// fetch, and where they write it.
func findDownloads(s string) []download {
	var out []download
	for _, seg := range shellSegments(s) {
		for i, word := range seg.words {
			base := path.Base(word)
			if base != "curl" && base != "wget" {
				continue
			}
			out = append(out, parseFetchCommand(base, seg.words[i+1:], seg.piped)...)
			break
		}
	}
	return out
}

func parseFetchCommand(cmd string, args []string, piped bool) []download {
	var urls []string
	to, redirect, dirPrefix := "", "", ""
	remoteName := cmd == "wget"
	argFlags := curlArgFlags
	if cmd == "wget" {
		argFlags = wgetArgFlags
	}
	setOut := func(flag byte, v string) {
		switch {
		case cmd == "curl" && flag == 'o', cmd == "wget" && flag == 'O':
			to = v
		case cmd == "wget" && flag == 'P':
			dirPrefix = v
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == ">" || a == ">>":
			redirect = next()
		case a == "--output" && cmd == "curl", a == "--output-document" && cmd == "wget":
			to = next()
		case strings.HasPrefix(a, "--output=") && cmd == "curl":
			to = strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "--output-document=") && cmd == "wget":
			to = strings.TrimPrefix(a, "--output-document=")
		case a == "--directory-prefix" && cmd == "wget":
			dirPrefix = next()
		case strings.HasPrefix(a, "--directory-prefix=") && cmd == "wget":
			dirPrefix = strings.TrimPrefix(a, "--directory-prefix=")
		case a == "--remote-name" && cmd == "curl":
			remoteName = true
		case a == "--url":
			urls = append(urls, next())
		case strings.HasPrefix(a, "--"):
			// Long options with a separate value are rare in fetch lines;
			// a following URL is still found below.
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				f := a[k]
				if cmd == "curl" && f == 'O' {
					remoteName = true
					continue
				}
				if strings.IndexByte(argFlags, f) >= 0 {
					v := a[k+1:]
					if v == "" {
						v = next()
					}
					setOut(f, v)
					break
				}
			}
		case isHTTPURL(a):
			urls = append(urls, a)
		}
	}
	if len(urls) == 0 {
		return nil
	}
	if to == "-" || to == "" && !remoteName {
		to = ""
		if !piped {
			to = redirect
		}
	}
	out := make([]download, len(urls))
	for i, u := range urls {
		out[i].URL = u
		if len(urls) != 1 {
			continue
		}
		t := to
		if t == "" && remoteName && !piped {
			if pu, err := url.Parse(u); err == nil && pu.Path != "" && !strings.HasSuffix(pu.Path, "/") {
				t = path.Join(dirPrefix, path.Base(pu.Path))
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
