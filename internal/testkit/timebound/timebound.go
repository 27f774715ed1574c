// Package timebound is the one margin tests allow beyond a configured time bound.
//
// A test of a time bound (a render, request, scan or shutdown timeout, a
// lease) asserts the promise the code makes: the thing ends within its
// configured bound, plus Slack for the machine to act on it. The bound is
// the configuration's, never a measured duration; what the machine's load
// decides (which of two bounds fires first, how fast a clean request is
// answered) is not asserted at all.
package timebound

import "time"

// Slack is what a test allows beyond a configured bound before it calls
// the bound broken: how late a loaded machine (2 cores kept busy by
// `make test-load`'s stress-ng and the other test binaries, load average
// about 10) delivers a timer or a signal, runs the goroutine that acts on
// it, kills a process and writes the answer. It is far below every bound
// the tests configure past another (a request timeout set past a render
// timeout is more than Slack past it), so a test still tells which bound
// ended a thing.
const Slack = 3 * time.Second

// Over reports whether took passed bound by more than Slack: the bound
// was not kept.
func Over(took, bound time.Duration) bool { return took > bound+Slack }

// Hang is how long a test waits for something that has no time bound of
// its own (a load that must not block on a FIFO, a server that must start)
// before it calls it blocked for ever. It asserts only that the thing ends:
// far past what any load makes of a real answer, far below `go test`'s
// own timeout, so a hang is a clear failure instead of a killed binary.
const Hang = 2 * time.Minute
