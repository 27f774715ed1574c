package gitsource

import (
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The pack a fetch receives is read twice: go-git's pack writer indexes it
// and, to hash the objects rebuilt from deltas, reads every object whole
// into memory (packfile.Parser.resolveDeltas, go-git v5.19.3), so one
// blob of 700 MiB of zeros, a few hundred kilobytes in the pack, costs
// its inflated size during the fetch. The guard below reads each object's
// header before go-git sees its bytes and refuses the fetch at the first
// object whose declared size (for a delta, the size of the object it
// makes) is over the per-file bound.

// ObjectLimitError is an object of a fetched pack over the per-file bound,
// found from its header while the pack streamed in.
type ObjectLimitError struct {
	Type   string // blob, tree, commit or tag; "delta" for an object rebuilt from a delta
	Size   int64  // the inflated size its header declares
	Offset int64  // of its header in the pack
	Limit  int64
	Commit string // the commit fetched, when known
}

func (e *ObjectLimitError) Error() string {
	find := ""
	if e.Commit != "" {
		find = fmt.Sprintf(" (`git ls-tree -r -l %s` lists each file's size)", e.Commit)
	}
	return fmt.Sprintf("the git data fetched holds a %s object of %d bytes (at byte %d of the pack), more than the %d a file may hold (limits.gitMaxFileBytes); nothing was scanned: raise limits.gitMaxFileBytes if the file really is that large, or keep it out of the repository%s",
		e.Type, e.Size, e.Offset, e.Limit, find)
}

// guardedStorage is a repository's storage whose pack writer is guarded:
// on a refusal, or any error writing the pack, refuse is called with it
// (it cancels the fetch's context, which makes go-git stop the transfer
// and end the upload-pack it runs).
type guardedStorage struct {
	*filesystem.Storage
	ctx    context.Context
	max    int64
	commit string
	refuse func(error)
}

func (s *guardedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return newPackGuard(s.ctx, w, s.max, s.commit, s.refuse), nil
}

// newPackGuard guards w (see packGuard) against objects over max.
func newPackGuard(ctx context.Context, w io.WriteCloser, max int64, commit string, refuse func(error)) *packGuard {
	g := &packGuard{ctx: ctx, w: w, refuse: refuse,
		chunks: make(chan []byte), acks: make(chan struct{}), done: make(chan struct{})}
	r := &chunkReader{chunks: g.chunks, acks: g.acks}
	go func() {
		defer close(g.done)
		g.err = parsePack(r, max, commit)
	}()
	return g
}

// packGuard hands each chunk written to it to the pack parser first, and
// to go-git's pack writer once the parser has read all of it: go-git
// never holds a byte of an object the parser has not accepted.
type packGuard struct {
	ctx     context.Context
	w       io.WriteCloser
	refuse  func(error)
	chunks  chan []byte
	acks    chan struct{}
	done    chan struct{}
	err     error // the parser's, once done is closed
	stopped error // what stopped the guard: a refusal, a write's error or the context's
	closed  bool
}

// Write never fails: an error here would end go-git's copy of the
// transfer with the upload-pack still writing, and go-git would then wait
// for it to end (file and ssh transports). Instead the fetch's context is
// cancelled with the error as its cause, and the rest of the transfer is
// swallowed until go-git's next read of it fails on the context, which
// makes go-git end the upload-pack.
func (g *packGuard) Write(p []byte) (int, error) {
	if g.stopped != nil {
		return len(p), nil
	}
	if err := g.ctx.Err(); err != nil {
		g.stop(err)
		return len(p), nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	select {
	case g.chunks <- p:
		select {
		case <-g.acks:
		case <-g.done:
		}
	case <-g.done:
	}
	select {
	case <-g.done:
		if g.err != nil {
			g.stop(g.err)
			return len(p), nil
		}
	default:
	}
	if _, err := g.w.Write(p); err != nil {
		g.stop(err)
	}
	return len(p), nil
}

func (g *packGuard) stop(err error) {
	g.stopped = err
	g.refuse(err)
}

// Close ends the parser and closes the writer behind the guard; the error
// is what stopped the guard, if anything did.
func (g *packGuard) Close() error {
	if !g.closed {
		g.closed = true
		close(g.chunks)
		<-g.done
	}
	err := g.w.Close()
	if g.stopped != nil {
		return g.stopped
	}
	return err
}

// chunkReader reads the chunks a packGuard hands over, one byte at a time
// when asked (so that zlib reads no further than its stream), and
// acknowledges a chunk once it is read to its end and more is wanted.
type chunkReader struct {
	cur    []byte
	held   bool // cur came from a chunk not yet acknowledged
	chunks <-chan []byte
	acks   chan<- struct{}
	n      int64 // bytes read
}

func (c *chunkReader) fill() error {
	for len(c.cur) == 0 {
		if c.held {
			c.acks <- struct{}{}
			c.held = false
		}
		p, ok := <-c.chunks
		if !ok {
			return io.ErrUnexpectedEOF
		}
		c.cur, c.held = p, true
	}
	return nil
}

func (c *chunkReader) ReadByte() (byte, error) {
	if err := c.fill(); err != nil {
		return 0, err
	}
	b := c.cur[0]
	c.cur = c.cur[1:]
	c.n++
	return b, nil
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := c.fill(); err != nil {
		return 0, err
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	c.n += int64(n)
	return n, nil
}

// errPack is a pack the guard cannot read: go-git would refuse it too.
var errPack = errors.New("malformed pack")

// Pack object types (gitformat-pack(5)).
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOFSDelta = 6
	objREFDelta = 7
)

var typeNames = map[byte]string{objCommit: "commit", objTree: "tree", objBlob: "blob", objTag: "tag", objOFSDelta: "delta", objREFDelta: "delta"}

// parsePack reads a pack (version 2 or 3, SHA-1 object names) from r and
// returns an *ObjectLimitError at the first object over max: its declared
// size, and for a delta the declared size of the object it makes, read
// from the first bytes of its inflated instructions. Every object is
// inflated (and the bytes discarded) to find where the next one starts,
// never to more than its declared size.
func parsePack(r *chunkReader, max int64, commit string) error {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("%w: header: %v", errPack, err)
	}
	if string(hdr[:4]) != "PACK" {
		return fmt.Errorf("%w: no PACK signature", errPack)
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return fmt.Errorf("%w: version %d", errPack, v)
	}
	count := binary.BigEndian.Uint32(hdr[8:])
	var zr io.ReadCloser
	for i := uint32(0); i < count; i++ {
		off := r.n
		typ, size, err := objectHeader(r)
		if err != nil {
			return err
		}
		tooBig := func(kind string, n int64) error {
			return &ObjectLimitError{Type: kind, Size: n, Offset: off, Limit: max, Commit: commit}
		}
		switch typ {
		case objCommit, objTree, objBlob, objTag:
		case objOFSDelta:
			if _, err := varint(r, 10); err != nil {
				return err
			}
		case objREFDelta:
			if _, err := io.ReadFull(r, make([]byte, 20)); err != nil {
				return fmt.Errorf("%w: object at %d: %v", errPack, off, err)
			}
		default:
			return fmt.Errorf("%w: object at %d has type %d", errPack, off, typ)
		}
		if size > max {
			return tooBig(typeNames[typ], size)
		}
		if zr == nil {
			zr, err = zlib.NewReader(r)
		} else {
			err = zr.(zlib.Resetter).Reset(r, nil)
		}
		if err != nil {
			return fmt.Errorf("%w: object at %d: %v", errPack, off, err)
		}
		body := &countReader{r: io.LimitReader(zr, size+1)}
		if typ == objOFSDelta || typ == objREFDelta {
			if _, err := varint(body, 10); err != nil { // the source's size
				return err
			}
			target, err := varint(body, 10)
			if err != nil {
				return err
			}
			if target > max {
				return tooBig("delta", target)
			}
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return fmt.Errorf("%w: object at %d: %v", errPack, off, err)
		}
		if body.n != size {
			return fmt.Errorf("%w: object at %d inflates to other than the %d bytes its header declares", errPack, off, size)
		}
	}
	if _, err := io.ReadFull(r, make([]byte, 20)); err != nil {
		return fmt.Errorf("%w: trailer: %v", errPack, err)
	}
	return nil
}

// objectHeader reads a pack object's type and inflated size.
func objectHeader(r io.ByteReader) (byte, int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: object header: %v", errPack, err)
	}
	typ := (c >> 4) & 7
	size := int64(c & 15)
	for shift := uint(4); c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return 0, 0, fmt.Errorf("%w: object size overflows", errPack)
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, fmt.Errorf("%w: object header: %v", errPack, err)
		}
		size |= int64(c&0x7f) << shift
	}
	return typ, size, nil
}

// varint reads a little-endian base-128 number of at most n bytes (the
// sizes at the start of a delta; for an OFS delta's base offset, only its
// length matters here).
func varint(r io.ByteReader, n int) (int64, error) {
	var v int64
	for i, shift := 0, uint(0); i < n; i, shift = i+1, shift+7 {
		c, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errPack, err)
		}
		if shift < 63 {
			v |= int64(c&0x7f) << shift
		}
		if v < 0 {
			return 0, fmt.Errorf("%w: size overflows", errPack)
		}
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: a number longer than %d bytes", errPack, n)
}

// countReader counts what is read through it, and reads one byte at a
// time when asked.
type countReader struct {
	r   io.Reader
	n   int64
	one [1]byte
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	if _, err := io.ReadFull(c, c.one[:]); err != nil {
		return 0, err
	}
	return c.one[0], nil
}
