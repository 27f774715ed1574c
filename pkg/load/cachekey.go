package load

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/render"
)

// keyFormat names what a key covers; it changes when that does.
const keyFormat = "pinseal-load-key/1"

// Bounds on what a key reads: a directory past them is loaded every time.
const (
	maxKeyEntries = 10_000
	maxKeyBytes   = 256 << 20
)

// loadKey is the cache key of one candidate and the stamps of what it
// covers, to tell whether a file changed while the candidate loaded.
type loadKey struct {
	sum    [32]byte
	stamps []stamp
}

// stamp is what a file looked like when its bytes went into a key.
type stamp struct {
	path   string
	follow bool // stat, not lstat (a link's target)
	id     fileID
}

// unchanged reports whether every file the key covers still looks as it
// did (size, mode, times, inode): else the load may have read other
// bytes than the key says, and is not kept.
func (k *loadKey) unchanged() bool {
	for _, s := range k.stamps {
		stat := os.Lstat
		if s.follow {
			stat = os.Stat
		}
		fi, err := stat(s.path)
		if err != nil || idOf(fi) != s.id {
			return false
		}
	}
	return true
}

// keyWriter hashes the fields of a key, each with its length, so that
// no two lists of fields hash alike.
type keyWriter struct {
	h      hash.Hash
	dir    string   // the candidate's
	root   *os.Root // dir opened as a root; nil: files are opened through the tree's
	stamps []stamp
	files  int
	bytes  int64
	ok     bool
}

func (w *keyWriter) field(s string) {
	var n [binary.MaxVarintLen64]byte
	w.h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	io.WriteString(w.h, s)
}

var keyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// cacheKey is the key of loading c: the SHA-256 of everything the load
// reads or is told. ok is false when c cannot be keyed (past the bounds,
// or a link to a directory outside it): it is then loaded every time.
func (l *scanner) cacheKey(c candidate) (loadKey, bool) {
	w := &keyWriter{h: sha256.New(), dir: c.dir, ok: true}
	w.field(keyFormat)
	w.field(l.root)
	w.field(c.dir)
	w.field(c.rel)
	w.field(strconv.FormatBool(c.chart))
	groups, _ := os.Getgroups()
	w.field(fmt.Sprint(os.Getuid(), os.Getgid(), groups)) // what may be read
	o := l.opts
	w.field(fmt.Sprintf("%q %q %d %#v %v %q", o.Namespace, o.CommandDir, o.Limit, o.Render, render.Available(o.Render), o.Exclude))
	w.field("crds judged " + strconv.FormatBool(o.CRDs != nil)) // the verdicts on the model
	l.keyValues(w, c.rel)
	// The candidate's files are opened through a root of its own: one
	// opened at the tree would walk every directory above each of them.
	if w.root = l.subRoot(c.dir); w.root != nil {
		defer w.root.Close()
	}
	l.keyDir(w, c.dir, ".", true)
	k := loadKey{stamps: w.stamps}
	w.h.Sum(k.sum[:0])
	return k, w.ok
}

// keyValues covers the policy's values files for the chart at rel, as
// valuesFor reads them.
func (l *scanner) keyValues(w *keyWriter, rel string) {
	for _, vf := range l.opts.Values {
		if ok, _ := path.Match(vf.Package, rel); !ok && vf.Package != rel {
			continue
		}
		w.field(vf.Package)
		for _, f := range vf.Files {
			w.field(f)
			if fi, err := os.Stat(f); err == nil {
				w.stamps = append(w.stamps, stamp{path: f, follow: true, id: idOf(fi)})
			}
			data, err := readCapped(f, maxValuesSize)
			if err != nil {
				w.field("error " + err.Error())
				continue
			}
			sum := sha256.Sum256(data)
			w.field(string(sum[:]))
		}
	}
}

// keyDir covers the directory dir (rel below the candidate; inside: dir
// is the candidate's, not one a link leads to) and everything under it:
// each entry's name, type and mode, a file's bytes, a link's target and
// what it resolves to (what is there when that is outside the
// candidate).
func (l *scanner) keyDir(w *keyWriter, dir, rel string, inside bool) {
	fi, err := os.Lstat(dir)
	if err != nil {
		w.field("error " + err.Error())
		return
	}
	w.entry(dir, rel, fi)
	ents, err := os.ReadDir(dir)
	if err != nil {
		w.field("error " + err.Error())
	}
	for _, e := range ents {
		if !w.ok {
			return
		}
		fp, er := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
		fi, err := e.Info()
		if err != nil {
			w.field(er)
			w.field("error " + err.Error())
			continue
		}
		switch {
		case fi.IsDir():
			l.keyDir(w, fp, er, inside)
		case fi.Mode().IsRegular():
			w.entry(fp, er, fi)
			if !inside {
				er = "" // opened through the tree's root
			}
			l.keyFile(w, fp, er, fi.Size())
		case fi.Mode()&fs.ModeSymlink != 0:
			w.entry(fp, er, fi)
			l.keyLink(w, fp)
		default:
			w.entry(fp, er, fi)
		}
	}
}

// entry covers one entry's name, type and mode bits.
func (w *keyWriter) entry(fp, rel string, fi fs.FileInfo) {
	w.files++
	if w.files > maxKeyEntries {
		w.ok = false
	}
	w.field(rel)
	w.field(strconv.FormatUint(uint64(fi.Mode()&(fs.ModeType|fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)), 16))
	w.stamps = append(w.stamps, stamp{path: fp, id: idOf(fi)})
}

// keyFile covers the bytes of the regular file at fp (in the tree; rel
// below the candidate, "" when outside it), read as the loader reads it:
// through a root, never blocking on what is not a regular file.
func (l *scanner) keyFile(w *keyWriter, fp, rel string, size int64) {
	w.bytes += size
	if w.bytes > maxKeyBytes {
		w.ok = false
		return
	}
	var f *os.File
	var err error
	if rel != "" && w.root != nil {
		f, err = layout.OpenRegular(w.root, rel)
	} else {
		f, err = l.open(fp)
	}
	if err != nil {
		w.field("error " + unwrapPath(err).Error())
		return
	}
	defer f.Close()
	h := sha256.New()
	buf := keyBuffers.Get().(*[]byte)
	defer keyBuffers.Put(buf)
	n, err := io.CopyBuffer(h, f, *buf)
	if err != nil || n != size {
		w.ok = false // changing under us: not keyed
		return
	}
	w.field(string(h.Sum(nil)))
}

// keyLink covers a symlink: its target as written, where it resolves,
// and, when that is outside the candidate but in the tree, what is there:
// a file's bytes, a directory's entries (the chart reader does not follow
// it, but a pinned path through it is read).
func (l *scanner) keyLink(w *keyWriter, fp string) {
	target, err := os.Readlink(fp)
	if err != nil {
		w.field("error " + err.Error())
		return
	}
	w.field(target)
	real, err := filepath.EvalSymlinks(fp)
	if err != nil {
		w.field("unresolved " + err.Error())
		return
	}
	w.field(real)
	if within(w.dir, real) {
		return // its bytes are the candidate's, covered there
	}
	fi, err := os.Stat(real)
	if err != nil {
		w.field("error " + err.Error())
		return
	}
	w.field(strconv.FormatUint(uint64(fi.Mode()&(fs.ModeType|fs.ModePerm)), 16))
	w.stamps = append(w.stamps, stamp{path: real, follow: true, id: idOf(fi)})
	switch {
	case !within(l.root, real):
		// Not followed: a package-load problem says so.
	case fi.IsDir():
		l.keyDir(w, real, "linked "+real, false)
	case fi.Mode().IsRegular():
		l.keyFile(w, real, "", fi.Size())
	}
}
