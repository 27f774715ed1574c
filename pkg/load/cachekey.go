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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/pinseal/pinseal/pkg/render"
)

// keyFormat names what a key covers; it changes when that does.
const keyFormat = "pinseal-load-key/2"

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
	kh     *keyHasher
	dir    string // the candidate's
	stamps []stamp
	files  int
	bytes  int64
	ok     bool
	// linked are the directories outside the candidate that links lead
	// to, covered once each: a loop of links is not walked again.
	linked map[string]bool
}

func (w *keyWriter) field(s string) {
	var n [binary.MaxVarintLen64]byte
	w.h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	io.WriteString(w.h, s)
}

// keyHasher is what a worker hashes a candidate's files with, reused from
// one candidate to the next: a read buffer (a file's bytes are read into
// it, never allocated per file) and a digest.
type keyHasher struct {
	buf []byte
	h   hash.Hash
}

var keyHashers = sync.Pool{New: func() any { return &keyHasher{buf: make([]byte, 256<<10), h: sha256.New()} }}

// keyConst is the part of every candidate's key that is the same for
// all of them: the user (what may be read) and the options.
func (l *scanner) keyConst() string {
	l.keyConstOnce.Do(func() {
		groups, _ := os.Getgroups()
		o := l.opts
		l.keyConstVal = fmt.Sprint(os.Getuid(), os.Getgid(), groups) + "\x00" +
			fmt.Sprintf("%q %q %d %#v %v %q", o.Namespace, o.CommandDir, o.Limit, o.Render, render.Available(o.Render), o.Exclude) + "\x00" +
			"crds judged " + strconv.FormatBool(o.CRDs != nil) // the verdicts on the model
	})
	return l.keyConstVal
}

// cacheKey is the key of loading c: the SHA-256 of everything the load
// reads or is told. ok is false when c cannot be keyed (past the bounds,
// or a link to a directory outside it): it is then loaded every time.
func (l *scanner) cacheKey(c candidate) (loadKey, bool) {
	kh := keyHashers.Get().(*keyHasher)
	defer keyHashers.Put(kh)
	w := &keyWriter{h: sha256.New(), kh: kh, dir: c.dir, ok: true}
	w.field(keyFormat)
	w.field(l.root)
	w.field(c.dir)
	w.field(c.rel)
	w.field(strconv.FormatBool(c.chart))
	w.field(l.keyConst())
	l.keyValues(w, c.rel)
	// The candidate's files are opened through a root of its own (one
	// opened at the tree would walk every directory above each of them),
	// each directory's through one of its own, so that a file opens in
	// one step, by name.
	l.keyRoot(w, c.dir, ".")
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

// keyRoot covers the directory dir of the tree (rel below the candidate,
// or "linked" and its path when a link leads to it) opened as a root, as
// the loader opens it: through the tree's root, never leaving it. A
// directory that cannot be opened so is not keyed.
func (l *scanner) keyRoot(w *keyWriter, dir, rel string) {
	r := l.subRoot(dir)
	if r == nil && l.fsys == nil {
		r, _ = os.OpenRoot(dir)
	}
	if r == nil {
		w.ok = false // not read, so not keyed: loaded every time
		return
	}
	defer r.Close()
	l.keyDir(w, r, dir, rel)
}

// keyDir covers the directory d (at fp, rel below the candidate) and
// everything under it: each entry's name, type and mode, a file's bytes,
// a link's target and what it resolves to (what is there when that is
// outside the candidate). The type of an entry is the directory's word
// for it; a file's mode is that of the file opened, so a file is looked
// up once.
func (l *scanner) keyDir(w *keyWriter, d *os.Root, fp, rel string) {
	f, err := d.Open(".")
	if err != nil {
		w.field("error " + unwrapPath(err).Error())
		return
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		w.field("error " + unwrapPath(err).Error())
		return
	}
	w.entry(fp, rel, fi)
	ents, err := readDir(f)
	f.Close()
	if err != nil {
		w.field("error " + unwrapPath(err).Error())
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		if !w.ok {
			return
		}
		name := e.Name()
		efp, er := filepath.Join(fp, name), path.Join(rel, name)
		switch t := e.Type(); {
		case t.IsDir():
			sub, err := d.OpenRoot(name)
			if err != nil {
				w.field(er)
				w.field("error " + unwrapPath(err).Error())
				continue
			}
			l.keyDir(w, sub, efp, er)
			sub.Close()
		case t.IsRegular():
			l.keyFile(w, d, name, efp, er)
		default:
			fi, err := d.Lstat(name)
			if err != nil {
				w.field(er)
				w.field("error " + unwrapPath(err).Error())
				continue
			}
			w.entry(efp, er, fi)
			if fi.Mode()&fs.ModeSymlink != 0 {
				l.keyLink(w, efp)
			}
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

// keyFile covers the entry name of d (at fp, rel below the candidate): its
// type and mode and, for a regular file, its bytes, read as the loader
// reads them: never blocking on what is not a regular file.
func (l *scanner) keyFile(w *keyWriter, d *os.Root, name, fp, rel string) {
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// Unreadable: what the directory says of it, and why.
		if fi, lerr := d.Lstat(name); lerr == nil {
			w.entry(fp, rel, fi)
		} else {
			w.field(rel)
		}
		w.field("error " + unwrapPath(err).Error())
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		w.field(rel)
		w.field("error " + unwrapPath(err).Error())
		return
	}
	w.entry(fp, rel, fi)
	if !fi.Mode().IsRegular() {
		return // swapped since the directory was read: its type says it
	}
	w.hashFile(f, fi.Size())
}

// hashFile covers the bytes of the regular file f, of size bytes when it
// was opened; a file whose size changes while it is read is not keyed.
func (w *keyWriter) hashFile(f *os.File, size int64) {
	w.bytes += size
	if w.bytes > maxKeyBytes {
		w.ok = false
		return
	}
	buf, h := w.kh.buf, w.kh.h
	h.Reset()
	var n int64
	for n < size {
		m, err := f.Read(buf[:min(int64(len(buf)), size-n)])
		h.Write(buf[:m])
		n += int64(m)
		if err != nil || m == 0 {
			break
		}
	}
	if n != size {
		w.ok = false // changing under us: not keyed
		return
	}
	var sum [sha256.Size]byte
	w.field(string(h.Sum(sum[:0])))
}

// keyLink covers a symlink: its target as written, where it resolves,
// and, when that is outside the candidate but in the tree, what is there:
// a file's bytes, a directory's entries and files (the chart reader
// follows it; a pinned path through it is read).
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
		if w.linked[real] {
			return // covered where a link first led to it
		}
		if w.linked == nil {
			w.linked = map[string]bool{}
		}
		w.linked[real] = true
		l.keyRoot(w, real, "linked "+real)
	case fi.Mode().IsRegular():
		f, err := l.open(real)
		if err != nil {
			w.field("error " + unwrapPath(err).Error())
			return
		}
		defer f.Close()
		w.hashFile(f, fi.Size())
	}
}
