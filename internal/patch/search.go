package patch

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
)

// A hunk is searched for by comparing a hash of its lines with a hash of
// the file's lines at each candidate position, both computed once, so that
// a position costs the same whatever the hunk's length; only a position
// whose hash matches is compared line by line. Comparing line by line at
// every position (as a naive search does) costs the file's length times
// the hunk's: minutes for a hostile hunk of many identical lines against a
// megabyte file of them.
//
// The hashes are polynomials over the line numbers (distinct lines get
// distinct numbers) modulo the prime 2^61-1, at a base drawn at random for
// each file: a patch written to make positions collide cannot know it.

const mersenne61 = 1<<61 - 1

func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	r := (hi<<3 | lo>>61) + lo&mersenne61
	if r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

func addmod(a, b uint64) uint64 {
	r := a + b
	if r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

func submod(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a + mersenne61 - b
}

// searchSteps is how many candidate positions one Apply may look at in
// all, per line of the file (plus searchSlack): enough for every hunk of a
// real patch to sit far from its header, and for a hunk that matches
// nowhere to be searched for across the whole file twice (once for itself,
// once for the "applied already" hint). A patch needing more (hunks whose
// headers all name lines far from where they match) stops with an
// *ApplyError saying so, rather than taking time quadratic in the file.
const (
	searchSteps = 8
	searchSlack = 1 << 16
)

// lineIndex is a file's lines with what searching them needs.
type lineIndex struct {
	lines  []string
	num    map[string]uint64 // distinct line -> its number (1…)
	prefix []uint64          // prefix[i]: hash of lines[:i]
	pow    []uint64          // pow[i]: base^i
	base   uint64
	budget int // candidate positions left to look at
	spent  bool
}

func newLineIndex(lines []string) *lineIndex {
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	ix := &lineIndex{
		lines:  lines,
		num:    make(map[string]uint64, len(lines)/4+1),
		prefix: make([]uint64, len(lines)+1),
		pow:    make([]uint64, len(lines)+1),
		base:   binary.LittleEndian.Uint64(seed[:])%(mersenne61-1<<20) + 1<<20,
		budget: searchSteps*len(lines) + searchSlack,
	}
	ix.pow[0] = 1
	for i, l := range lines {
		n, ok := ix.num[l]
		if !ok {
			n = uint64(len(ix.num) + 1)
			ix.num[l] = n
		}
		ix.prefix[i+1] = addmod(mulmod(ix.prefix[i], ix.base), n)
		ix.pow[i+1] = mulmod(ix.pow[i], ix.base)
	}
	return ix
}

// hashOf hashes want the way windows of the file are hashed; ok is false
// when a line of want is in no line of the file (it matches nowhere).
func (ix *lineIndex) hashOf(want []string) (uint64, bool) {
	var h uint64
	for _, l := range want {
		n, ok := ix.num[l]
		if !ok {
			return 0, false
		}
		h = addmod(mulmod(h, ix.base), n)
	}
	return h, true
}

// window is the hash of lines[at:at+n].
func (ix *lineIndex) window(at, n int) uint64 {
	return submod(ix.prefix[at+n], mulmod(ix.prefix[at], ix.pow[n]))
}

// find returns the position nearest want (not before from) where old
// matches the lines exactly (from the line index from on). It gives up, setting ix.spent, when the
// search budget runs out.
func (ix *lineIndex) find(old []string, want, from int) (int, bool) {
	lines := ix.lines
	last := len(lines) - len(old) // highest possible start
	if last < from {
		return 0, false
	}
	h, ok := ix.hashOf(old)
	if !ok {
		return 0, false
	}
	want = max(min(want, last), from)
	try := func(at int) bool {
		ix.budget--
		return ix.window(at, len(old)) == h && matchAt(lines, old, at)
	}
	for d := 0; ; d++ {
		lo, hi := want-d, want+d
		if lo < from && hi > last {
			return 0, false
		}
		if ix.budget <= 0 {
			ix.spent = true
			return 0, false
		}
		if lo >= from && try(lo) {
			return lo, true
		}
		if d > 0 && hi <= last && try(hi) {
			return hi, true
		}
	}
}
