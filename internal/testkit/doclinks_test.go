package testkit

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds the front door: what pinseal is, the two commands,
// one example per command, the output and links. The rest lives in docs/.
const readmeMaxLines = 200

// mdLink is an inline Markdown link or image target: ](target) or
// ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdDoc is a Markdown file read for its headings and links.
type mdDoc struct {
	anchors map[string]bool
	links   []mdRef
	lines   int
}

type mdRef struct {
	line   int
	target string
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// spaces, hyphens and underscores kept, the rest (backquotes, colons,
// dots) dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// parseMarkdown collects a document's heading anchors (a repeated heading
// gets -1, -2, … as on GitHub) and its links, both outside fenced code.
func parseMarkdown(text string) mdDoc {
	d := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		d.lines++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			a := slug(h)
			if n := seen[a]; n > 0 {
				d.anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			d.links = append(d.links, mdRef{line: d.lines, target: m[1]})
		}
	}
	return d
}

// brokenLinks checks every relative link of the documents (paths relative
// to root, slash-separated): the file or folder it names exists and, with
// #anchor into a Markdown file, that file has the heading. read returns a
// file's text, or an error when there is none.
func brokenLinks(docs []string, read func(string) (string, error), exists func(string) bool) []string {
	parsed := map[string]mdDoc{}
	doc := func(name string) (mdDoc, error) {
		if d, ok := parsed[name]; ok {
			return d, nil
		}
		text, err := read(name)
		if err != nil {
			return mdDoc{}, err
		}
		d := parseMarkdown(text)
		parsed[name] = d
		return d, nil
	}
	var bad []string
	for _, name := range docs {
		d, err := doc(name)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		for _, l := range d.links {
			t := l.target
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(t, "#")
			target := name
			if file != "" {
				target = path.Join(path.Dir(name), file)
				if strings.HasPrefix(target, "../") || path.IsAbs(file) {
					bad = append(bad, fmt.Sprintf("%s:%d: %s leads out of the repository", name, l.line, t))
					continue
				}
				if !exists(target) {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: no file %s", name, l.line, t, target))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: an anchor into %s, which is no Markdown file", name, l.line, t, target))
				continue
			}
			td, err := doc(target)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %v", name, l.line, t, err))
				continue
			}
			if !td.anchors[anchor] {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", name, l.line, t, target, anchor))
			}
		}
	}
	return bad
}

// TestDocLinks: README.md stays the front door (at most readmeMaxLines
// lines), and every relative link of README.md, CONTRIBUTING.md,
// examples/README.md, docs/*.md and api/*.md names a file or folder of the repository and, with #anchor, a
// heading of that file: moving a section breaks no link unnoticed.
func TestDocLinks(t *testing.T) {
	const root = "../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := parseMarkdown(string(readme)).lines; n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a file under docs/ and link it", n, readmeMaxLines)
	}
	docs := []string{"README.md", "CONTRIBUTING.md", "examples/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	api, err := filepath.Glob(filepath.Join(root, "api", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		docs = append(docs, "docs/"+filepath.Base(m))
	}
	for _, m := range api {
		docs = append(docs, "api/"+filepath.Base(m))
	}
	if len(more) < 6 {
		t.Fatalf("found %d files under docs/, want the builder, verifier, formats, service, architecture and performance documents", len(more))
	}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		return string(b), err
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(name)))
		return err == nil
	}
	links := 0
	for _, d := range docs {
		text, err := read(d)
		if err != nil {
			t.Fatal(err)
		}
		links += len(parseMarkdown(text).links)
	}
	if links < 50 {
		t.Fatalf("found only %d links in %d documents: the link pattern no longer matches", links, len(docs))
	}
	for _, b := range brokenLinks(docs, read, exists) {
		t.Error(b)
	}
}

// TestBrokenLinksFinds: each kind of broken link is reported, and the
// links that resolve are not.
func TestBrokenLinksFinds(t *testing.T) {
	files := map[string]string{
		"README.md": "# pinseal\n\n## Two commands\n\n" +
			"[ok](docs/a.md) [ok](docs/a.md#the-builder-build) [ok](#two-commands) [ok](api) [ok](https://example.com/x#y)\n" +
			"```\n[in a fence](nowhere.md)\n## Not a heading\n```\n" +
			"[gone](docs/gone.md) [no anchor](docs/a.md#not-a-heading) [here](#nope) [out](../x.md) [no md](api#x)\n",
		"docs/a.md": "# A\n\n## The builder: `build`\n\n## Twice\n\n## Twice\n\n[ok](../README.md#two-commands) [ok](#twice-1) [bad](#twice-2)\n",
		"api":       "",
	}
	read := func(name string) (string, error) {
		if s, ok := files[name]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	exists := func(name string) bool { _, ok := files[name]; return ok }
	got := brokenLinks([]string{"README.md", "docs/a.md"}, read, exists)
	want := []string{
		"README.md:10: docs/gone.md: no file docs/gone.md",
		"README.md:10: docs/a.md#not-a-heading: docs/a.md has no heading #not-a-heading",
		"README.md:10: #nope: README.md has no heading #nope",
		"README.md:10: ../x.md leads out of the repository",
		"README.md:10: api#x: an anchor into api, which is no Markdown file",
		"docs/a.md:9: #twice-2: docs/a.md has no heading #twice-2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		" Signatures: forms, keys and keyless identities": "signatures-forms-keys-and-keyless-identities",
		" Where `verifier check` spends its time":         "where-verifier-check-spends-its-time",
		" Git sources, PostgreSQL, replicas":              "git-sources-postgresql-replicas",
		" pkg/load_x":                                     "pkgload_x",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
