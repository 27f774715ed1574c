// Package pkgcache keeps loaded packages across runs (a load.Cache) in
// files under the user's cache directory, one per key, and ignores a file
// it cannot trust.
package pkgcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pinseal/pinseal/pkg/load"
)

// format starts every entry; an entry of another format is ignored.
const format = "pinseal-load/1\n"

// DefaultMaxBytes is how much Trim keeps by default.
const DefaultMaxBytes = 1 << 30

// maxEntry bounds an entry read or written: a bigger one is ignored.
const maxEntry = 256 << 20

// staleTemp is how old a temporary file grows before Trim takes it for
// one a writer that died left.
const staleTemp = time.Hour

// castagnoli is the CRC-32C table: the checksum guards against a file cut
// short or damaged, not against someone who may write the directory (who
// could write a valid entry whatever the checksum).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store is a load.Cache in a directory. Safe for concurrent use, by
// several processes too: an entry is written whole to a temporary file
// and renamed into place, and the same key always names the same bytes,
// so concurrent writers of one entry are harmless.
type Store struct {
	dir, build string
	log        *slog.Logger
	written    atomic.Int64 // bytes Put wrote this run
}

var _ load.Cache = (*Store)(nil)

// Open is the store in dir for build (crdcache.Build()): entries other
// builds wrote are never read. log gets, at debug level, each entry
// ignored and why.
func Open(dir, build string, log *slog.Logger) *Store {
	if log == nil {
		log = slog.Default()
	}
	return &Store{dir: dir, build: build, log: log}
}

// name is the file of key: the hash of the build and the key, so that
// builds sharing the directory keep apart.
func (s *Store) name(key [32]byte) string {
	h := sha256.New()
	h.Write([]byte(s.build))
	h.Write([]byte{0})
	h.Write(key[:])
	return filepath.Join(s.dir, hex.EncodeToString(h.Sum(nil)))
}

// header is the fixed part that follows format: the build (its length
// first), the key, the payload's length and CRC-32C.
func (s *Store) header(key [32]byte, payload []byte) []byte {
	b := append([]byte(format), binary.AppendUvarint(nil, uint64(len(s.build)))...)
	b = append(b, s.build...)
	b = append(b, key[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
}

// Get is the payload kept under key; false when there is none, or the
// file is not one this build wrote whole for key (logged, ignored).
func (s *Store) Get(key [32]byte) ([]byte, bool) {
	path := s.name(key)
	data, mod, err := readEntry(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Debug("a package cache entry was ignored", "file", path, "why", err)
		}
		return nil, false
	}
	payload, err := s.parse(key, data)
	if err != nil {
		s.log.Debug("a package cache entry was ignored", "file", path, "why", err)
		return nil, false
	}
	// Trim removes the least recently used first. An entry used in the
	// last touchEvery is recent enough: not touching it again spares a
	// write to the file system per entry recalled.
	if now := time.Now(); now.Sub(mod) > touchEvery || mod.After(now) {
		_ = os.Chtimes(path, now, now)
	}
	return payload, true
}

// touchEvery is how long an entry used counts as just used: Get moves
// its modification time on (for Trim) only when it is older.
const touchEvery = time.Hour

// readEntry reads the entry at path and its modification time.
func readEntry(path string) ([]byte, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxEntry {
		return nil, time.Time{}, fmt.Errorf("not a regular file of at most %d bytes", maxEntry)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, time.Time{}, err
	}
	return data, fi.ModTime(), nil
}

// parse checks an entry's header against this build and key and the
// payload against its length and checksum.
func (s *Store) parse(key [32]byte, data []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(data, []byte(format))
	if !ok {
		return nil, errors.New("not of format " + strings.TrimSpace(format))
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return nil, errors.New("header cut short")
	}
	rest = rest[w:]
	if string(rest[:n]) != s.build {
		return nil, fmt.Errorf("written by another build (%q)", rest[:n])
	}
	rest = rest[n:]
	if len(rest) < len(key)+12 {
		return nil, errors.New("header cut short")
	}
	if !bytes.Equal(rest[:len(key)], key[:]) {
		return nil, errors.New("written for another key")
	}
	size, sum := binary.BigEndian.Uint64(rest[len(key):]), binary.BigEndian.Uint32(rest[len(key)+8:])
	payload := rest[len(key)+12:]
	if uint64(len(payload)) != size {
		return nil, fmt.Errorf("payload of %d bytes, header says %d (cut short or half written)", len(payload), size)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, errors.New("the payload's checksum is not the header's (corrupt)")
	}
	return payload, nil
}

// Put keeps payload under key: written to a temporary file renamed into
// place, so a reader sees no entry or a whole one. A failure is logged at
// debug level: the cache is an optimisation.
func (s *Store) Put(key [32]byte, payload []byte) {
	if err := s.put(key, payload); err != nil {
		s.log.Debug("a package cache entry was not written", "err", err)
	}
}

// entry is the file of payload under key.
func (s *Store) entry(key [32]byte, payload []byte) []byte {
	return append(s.header(key, payload), payload...)
}

func (s *Store) put(key [32]byte, payload []byte) error {
	data := s.entry(key, payload)
	if len(data) > maxEntry {
		return fmt.Errorf("entry of %d bytes, over %d", len(data), maxEntry)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.name(key))
	}
	if err == nil {
		s.written.Add(int64(len(data)))
	}
	return err
}

// Trim removes the least recently used entries until the directory holds
// at most max bytes (DefaultMaxBytes when <= 0), and temporary files a
// writer that died left. It does nothing after a run that wrote nothing.
func (s *Store) Trim(max int64) error {
	if s.written.Load() == 0 {
		return nil
	}
	if max <= 0 {
		max = DefaultMaxBytes
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("pkgcache: %w", err)
	}
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if time.Since(fi.ModTime()) > staleTemp {
				os.Remove(p)
			}
			continue
		}
		files = append(files, file{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	for _, f := range files {
		if total <= max {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, os.ErrNotExist) {
			total -= f.size
		}
	}
	return nil
}
