// Package crdcache keeps components-apply's judgement of CRDs across runs
// in one file under the user's cache directory, and ignores a file it
// cannot trust.
package crdcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/pinseal/pinseal/pkg/check"
)

// format names the file's layout; a file of another format is ignored.
const format = "pinseal-crd-facts/2"

// maxFile bounds what Open reads: a bigger file is ignored.
const maxFile = 64 << 20

// staleLock is how old a writer's lock may grow before Save takes it for
// one that died.
const staleLock = 10 * time.Minute

// Cache is a check.CRDMemo read from a file at Open and written back by
// Save with the entries this run used. Safe for concurrent use.
type Cache struct {
	path, build string

	mu      sync.Mutex
	old     map[string]check.CRDFacts // read at Open
	used    map[string]check.CRDFacts // recalled or remembered this run
	ignored string                    // why the file was not believed
}

var _ check.CRDMemo = (*Cache)(nil)

// Dir is where the verifier keeps its cache: $XDG_CACHE_HOME/pinseal, else
// the system's user cache directory (os.UserCacheDir).
func Dir() (string, error) {
	d := os.Getenv("XDG_CACHE_HOME")
	if d == "" {
		var err error
		if d, err = os.UserCacheDir(); err != nil {
			return "", fmt.Errorf("crdcache: no cache directory: %w (set XDG_CACHE_HOME)", err)
		}
	}
	return filepath.Join(d, "pinseal"), nil
}

// Build names this build of the program: its module version and VCS
// revision (with a modified tree's mark) and the size and time of its
// executable, so that a rebuilt binary never believes another's facts.
func Build() string {
	var b strings.Builder
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.WriteString(bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				b.WriteString(" " + s.Key + "=" + s.Value)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(&b, " exe=%d@%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// Open reads the cache file in dir for build (Build()). A missing file is
// an empty cache; a file that is corrupt, of another format or build,
// half written or over the size bound is ignored (Ignored says why),
// never believed.
func Open(dir, build string) *Cache {
	c := &Cache{path: filepath.Join(dir, "crd-facts"), build: build, old: map[string]check.CRDFacts{}, used: map[string]check.CRDFacts{}}
	old, err := read(c.path, build)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			c.ignored = err.Error()
		}
		return c
	}
	c.old = old
	return c
}

// read parses the file: a header line (format, build, SHA-256 of the
// body) and the body, JSON of the entries by hex SHA-256 of a CRD
// document.
func read(path, build string) (map[string]check.CRDFacts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxFile)
	}
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("%s: no header line", path)
	}
	var h header
	if err := json.Unmarshal(head, &h); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	if h.Format != format {
		return nil, fmt.Errorf("%s: format %q, want %q", path, h.Format, format)
	}
	if h.Build != build {
		return nil, fmt.Errorf("%s: written by another build (%q)", path, h.Build)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != h.Body {
		return nil, fmt.Errorf("%s: the body's SHA-256 is not the header's (corrupt or half written)", path)
	}
	var entries map[string]check.CRDFacts
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, fmt.Errorf("%s: body: %w", path, err)
	}
	return entries, nil
}

type header struct {
	Format string `json:"format"`
	Build  string `json:"build"`
	Body   string `json:"body"` // hex SHA-256 of the rest of the file
}

// Ignored is why the file Open found was not believed, "" when it was
// (or there was none).
func (c *Cache) Ignored() string { return c.ignored }

// Recall is the facts remembered for the CRD document whose bytes have
// SHA-256 sum.
func (c *Cache) Recall(sum [32]byte) (check.CRDFacts, bool) {
	k := hex.EncodeToString(sum[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.used[k]
	if !ok {
		if f, ok = c.old[k]; ok {
			c.used[k] = f
		}
	}
	return f, ok
}

// Remember keeps f for the CRD document whose bytes have SHA-256 sum.
func (c *Cache) Remember(sum [32]byte, f check.CRDFacts) {
	k := hex.EncodeToString(sum[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used[k] = f
}

// Save writes the entries this run used (so the file stays the size of
// the tree last checked) when they differ from what Open read: to a
// temporary file renamed over the old one, so a reader sees the old file
// or the new one whole. While another writer holds the lock, Save writes
// nothing and returns nil: the cache is an optimisation.
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unchanged() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("crdcache: %w", err)
	}
	lock := c.path + ".lock"
	if !takeLock(lock) {
		return nil
	}
	defer os.Remove(lock)
	body, err := json.Marshal(c.used)
	if err != nil {
		return fmt.Errorf("crdcache: %w", err)
	}
	sum := sha256.Sum256(body)
	head, _ := json.Marshal(header{Format: format, Build: c.build, Body: hex.EncodeToString(sum[:])})
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".crd-facts-*")
	if err != nil {
		return fmt.Errorf("crdcache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing
	_, err = tmp.Write(append(append(head, '\n'), body...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		return fmt.Errorf("crdcache: writing %s: %w (remove the directory if it stays unwritable)", c.path, err)
	}
	return nil
}

func (c *Cache) unchanged() bool {
	if c.ignored != "" || len(c.used) != len(c.old) {
		return false
	}
	for k, f := range c.used {
		o, ok := c.old[k]
		if !ok || !reflect.DeepEqual(o, f) {
			return false
		}
	}
	return true
}

// takeLock creates the lock file; false when another writer holds it (a
// lock older than staleLock is taken for one that died, and replaced).
func takeLock(lock string) bool {
	for range 2 {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return true
		}
		fi, serr := os.Stat(lock)
		if serr != nil || time.Since(fi.ModTime()) < staleLock {
			return false
		}
		os.Remove(lock)
	}
	return false
}
