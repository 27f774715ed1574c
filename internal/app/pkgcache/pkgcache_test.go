package pkgcache

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var keyA = [32]byte{1, 2, 3}

// debugLog is a logger whose debug lines a test reads.
func debugLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&lockedWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestPutGet(t *testing.T) {
	s := Open(t.TempDir(), "b1", nil)
	if _, ok := s.Get(keyA); ok {
		t.Fatal("a hit in an empty store")
	}
	s.Put(keyA, []byte("payload"))
	got, ok := s.Get(keyA)
	if !ok || string(got) != "payload" {
		t.Fatalf("got %q %v", got, ok)
	}
	if _, ok := s.Get([32]byte{9}); ok {
		t.Fatal("a hit for a key never put")
	}
	if _, ok := Open(s.dir, "b2", nil).Get(keyA); ok {
		t.Fatal("another build read the entry")
	}
}

// TestUntrusted: an entry that is not whole, not this build's or not this
// key's is ignored, with a debug log saying why, never believed.
func TestUntrusted(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		edit      func(s *Store, b []byte) []byte
	}{
		{"truncated", "cut short", func(_ *Store, b []byte) []byte { return b[:len(b)-2] }},
		{"header truncated", "cut short", func(_ *Store, b []byte) []byte { return b[:len(format)+3] }},
		{"corrupt", "checksum", func(_ *Store, b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"longer", "cut short or half written", func(_ *Store, b []byte) []byte { return append(b, 'x') }},
		{"other format", "not of format", func(_ *Store, b []byte) []byte { return append([]byte("pinseal-load/0\n"), b[len(format):]...) }},
		{"other build", "another build", func(_ *Store, _ []byte) []byte {
			return Open("", "b0", nil).entry(keyA, []byte("payload"))
		}},
		{"other key", "another key", func(_ *Store, _ []byte) []byte {
			return Open("", "b1", nil).entry([32]byte{7}, []byte("payload"))
		}},
		{"empty", "not of format", func(_ *Store, _ []byte) []byte { return nil }},
		{"too big", "at most", nil}, // grown sparse past the bound
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, buf := debugLog()
			s := Open(t.TempDir(), "b1", log)
			s.Put(keyA, []byte("payload"))
			path := s.name(keyA)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit == nil {
				err = os.Truncate(path, maxEntry+1)
			} else {
				err = os.WriteFile(path, tc.edit(s, b), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := s.Get(keyA); ok {
				t.Fatalf("believed: %q", got)
			}
			if !bytes.Contains(buf.Bytes(), []byte("ignored")) || !bytes.Contains(buf.Bytes(), []byte(tc.why)) {
				t.Fatalf("the debug log does not say %q: %s", tc.why, buf)
			}
			s.Put(keyA, []byte("payload")) // replaced whole
			if got, ok := s.Get(keyA); !ok || string(got) != "payload" {
				t.Fatalf("after Put: %q %v", got, ok)
			}
		})
	}
}

// TestConcurrentWriters: processes (here goroutines with stores of their
// own) writing and reading the same entries at once only ever read whole
// entries.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	payload := bytes.Repeat([]byte("0123456789"), 50_000)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := Open(dir, "b1", nil)
			for i := range 20 {
				k := [32]byte{byte(i % 3)}
				s.Put(k, payload)
				if got, ok := s.Get(k); ok && !bytes.Equal(got, payload) {
					t.Errorf("writer %d read a partial entry", w)
				}
			}
		}()
	}
	wg.Wait()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("%d files, want the 3 entries (no temporary file left)", len(ents))
	}
}

// TestTrim: the least recently used entries go first, down to the bound;
// temporary files a dead writer left go; a run that wrote nothing does
// not trim.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, "b1", nil)
	payload := make([]byte, 1000)
	old := time.Now().Add(-2 * touchEvery)
	for i := range 5 {
		k := [32]byte{byte(i)}
		s.Put(k, payload)
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(s.name(k), at, at)
	}
	s.Get([32]byte{0}) // used now: the most recent
	stale := filepath.Join(dir, ".tmp-dead")
	os.WriteFile(stale, nil, 0o600)
	os.Chtimes(stale, old.Add(-staleTemp), old.Add(-staleTemp))
	if err := s.Trim(int64(2 * (len(payload) + 100))); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false, false, true} {
		if _, err := os.Stat(s.name([32]byte{byte(i)})); (err == nil) != want {
			t.Errorf("entry %d kept: %v, want %v", i, err == nil, want)
		}
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale temporary file was kept")
	}
	idle := Open(dir, "b1", nil)
	if err := idle.Trim(1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.name([32]byte{0})); err != nil {
		t.Error("a run that wrote nothing trimmed")
	}
}

// TestGetTouches: Get marks an entry used (Trim keeps the most recently
// used) by its modification time, moved on only when older than
// touchEvery, so that a warm run writes nothing for entries it used
// lately.
func TestGetTouches(t *testing.T) {
	s := Open(t.TempDir(), "b1", nil)
	now := time.Now()
	for name, tc := range map[string]struct {
		at      time.Time
		touched bool
	}{
		"used lately":   {now.Add(-touchEvery / 2), false},
		"used long ago": {now.Add(-2 * touchEvery), true},
		"in the future": {now.Add(touchEvery), true},
	} {
		t.Run(name, func(t *testing.T) {
			s.Put(keyA, []byte("payload"))
			if err := os.Chtimes(s.name(keyA), tc.at, tc.at); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Get(keyA); !ok {
				t.Fatal("not recalled")
			}
			fi, err := os.Stat(s.name(keyA))
			if err != nil {
				t.Fatal(err)
			}
			if touched := !fi.ModTime().Equal(tc.at); touched != tc.touched {
				t.Fatalf("touched: %v, want %v", touched, tc.touched)
			}
			if tc.touched && now.Sub(fi.ModTime()) > time.Minute {
				t.Fatalf("touched to %v, not now", fi.ModTime())
			}
		})
	}
}
