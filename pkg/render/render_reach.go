package render

import (
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// What a render child is sent. A chart's vendored manifest (megabytes) is
// usually shipped beside its blob, and no template reads it: sending it to
// the child costs a pipe transfer, a decode and the child's memory for
// nothing. The child is sent such a file empty, when the templates show
// that no template can read it.
//
// The templates are read conservatively: every mention of "Files", and
// every call of a method of .Files however reached, must be a .Files.Get,
// .Files.GetBytes or .Files.Lines of a literal name (quoted, without
// escapes), and no
// template may use tpl (which renders text a template builds). Anything
// else (.Files.Glob, AsConfig, a computed name, a subchart, the word in a
// comment) sends every file whole.

// filesMethodCalls are the methods of .Files. A template can reach .Files
// without writing the word (`get . "Files"`, `index . .Values.k`), but it
// calls a method by name, after a dot.
var filesMethodCalls = []string{".Get", ".Lines", ".Glob", ".AsConfig", ".AsSecrets"}

// MayReadFiles reports whether a template's source may read the chart's
// files (.Files or one of its methods, however reached).
func MayReadFiles(src []byte) bool {
	s := string(src)
	if strings.Contains(s, "Files") {
		return true
	}
	for _, m := range filesMethodCalls {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// literalFilesRead matches one read of a chart file by a literal name.
var literalFilesRead = regexp.MustCompile(`^Files\.(?:Get|GetBytes|Lines)[ \t]+("(?:[^"\\\n])*"|` + "`[^`]*`" + `)`)

// tplCall matches the tpl function as a word.
var tplCall = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.$])tpl(?:$|[^A-Za-z0-9_])`)

// omitMin is the size under which a file is always sent: the saving would
// not pay for the scan.
const omitMin = 4 << 10

// chartLoaderFiles are the files Helm's loader itself reads (not through
// .Files); they are always sent.
var chartLoaderFiles = map[string]bool{
	"Chart.yaml": true, "values.yaml": true, "values.schema.json": true,
	"Chart.lock": true, "requirements.yaml": true, "requirements.lock": true,
}

// ReadByLoader reports whether Helm's loader itself reads the chart file
// name (not through .Files).
func ReadByLoader(name string) bool { return chartLoaderFiles[name] }

// unreadFiles returns the names of the chart files of at least omitMin
// bytes that no template can read (see above), or nil when the templates
// do not show it.
func unreadFiles(files []*loader.BufferedFile) map[string]bool {
	for _, f := range files {
		if strings.HasPrefix(f.Name, "charts/") {
			return nil // a subchart's templates read its files by other names
		}
	}
	read := map[string]bool{}
	for _, f := range files {
		if !strings.HasPrefix(f.Name, "templates/") {
			continue
		}
		text := string(f.Data)
		if strings.Contains(text, "tpl") && tplCall.MatchString(text) {
			return nil
		}
		for i := 0; ; {
			j := strings.Index(text[i:], "Files")
			if j < 0 {
				break
			}
			at := i + j
			if at == 0 || text[at-1] != '.' {
				return nil
			}
			m := literalFilesRead.FindStringSubmatch(text[at:])
			if m == nil {
				return nil
			}
			read[m[1][1:len(m[1])-1]] = true // a literal without escapes
			i = at + len(m[0])
		}
		// A method of .Files reached another way (`get . "Files"`, a
		// variable): what it reads is not known.
		for _, m := range filesMethodCalls {
			if strings.Count(text, m) != strings.Count(text, "Files"+m) {
				return nil
			}
		}
	}
	var out map[string]bool
	for _, f := range files {
		if len(f.Data) < omitMin || read[f.Name] || chartLoaderFiles[f.Name] || strings.HasPrefix(f.Name, "templates/") {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[f.Name] = true
	}
	return out
}
