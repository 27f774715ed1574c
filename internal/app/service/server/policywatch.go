package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/policy"
)

// policyWatch holds a verification policy (of POST /v1/verify, or of a
// source), parsed once and again only when it changed, and fingerprints it
// together with everything it names that a verdict depends on: the policy
// file's bytes, the bytes of each key file it lists, and this build (whose
// checks and default policy are part of every result). The fingerprint is
// part of the verdict cache key, so a changed policy or a replaced key
// file gives new verdicts without a restart.
//
// Each call stats the files (cheap); the files are read again only when
// one of them changed (another file, size or modification time) or after
// Reload (SIGHUP).
type policyWatch struct {
	path string // "" = the built-in default policy

	mu    sync.Mutex
	files []stamp // the policy file, then its key files
	fp    string
	pol   *policy.Policy
}

type stamp struct {
	path string
	info os.FileInfo // nil: did not exist
}

func (st stamp) unchanged() bool {
	fi, err := os.Stat(st.path)
	if err != nil || st.info == nil {
		return err != nil && st.info == nil
	}
	return os.SameFile(fi, st.info) && fi.Size() == st.info.Size() && fi.ModTime().Equal(st.info.ModTime())
}

// Fingerprint returns the current fingerprint; an error when the policy or
// a key file it names cannot be read or parsed.
func (w *policyWatch) Fingerprint() (string, error) {
	_, fp, err := w.Current()
	return fp, err
}

// Current returns the parsed policy as it is now with its fingerprint:
// the files are stat'ed, and read and parsed again only when one changed.
func (w *policyWatch) Current() (*policy.Policy, string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fp != "" {
		same := true
		for _, f := range w.files {
			if !f.unchanged() {
				same = false
				break
			}
		}
		if same {
			return w.pol, w.fp, nil
		}
	}
	fp, err := w.load()
	return w.pol, fp, err
}

// Reload forgets what was read, so that the next Fingerprint reads every
// file again; it returns the new fingerprint.
func (w *policyWatch) Reload() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fp, w.files = "", nil
	return w.load()
}

// load reads the policy and its key files; w.mu is held.
func (w *policyWatch) load() (string, error) {
	w.fp, w.files, w.pol = "", nil, nil
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", version.Version)
	if w.path == "" {
		h.Write([]byte("default"))
		w.fp, w.pol = hex.EncodeToString(h.Sum(nil)), policy.Default()
		return w.fp, nil
	}
	var files []stamp
	read := func(path string) ([]byte, error) {
		// Stat before reading: a change while reading shows next time.
		fi, _ := os.Stat(path)
		files = append(files, stamp{path: path, info: fi})
		return os.ReadFile(path)
	}
	data, err := read(w.path)
	if err != nil {
		return "", fmt.Errorf("policy %s: %w", w.path, err)
	}
	fmt.Fprintf(h, "policy %d\x00", len(data))
	h.Write(data)
	pol, err := policy.Parse(data, w.path)
	if err != nil {
		return "", err
	}
	for i, k := range pol.Keys {
		if strings.Contains(k, "-----BEGIN ") {
			continue // inline: part of the policy's bytes
		}
		file := k
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(w.path), file)
		}
		b, err := read(file)
		if err != nil {
			return "", fmt.Errorf("policy %s: keys[%d]: %w", w.path, i, err)
		}
		fmt.Fprintf(h, "key %d %d\x00", i, len(b))
		h.Write(b)
	}
	w.files, w.fp, w.pol = files, hex.EncodeToString(h.Sum(nil)), pol
	return w.fp, nil
}
