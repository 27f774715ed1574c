package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"github.com/pinseal/pinseal/internal/profile"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// A pool of render children. A child renders one chart at a time; one that
// rendered within bounds waits (idle) for the next chart, one that passed a
// bound or whose caller gave up is killed. Children are keyed by their
// memory bound (set once, at start); the time and output bounds travel with
// each chart.

const (
	// workerIdle is how long an idle child waits for a chart before it is
	// retired.
	workerIdle = 30 * time.Second
	// workerCharts is how many charts one child renders before it is
	// retired (and its heap with it).
	workerCharts = 500
	// frameSlack is what the encoding adds to the rendered manifests in a
	// child's answer.
	frameSlack = 1 << 20
	// workerPatience is how long a chart waits for a busy child to come
	// free before another child starts. A warm render takes milliseconds;
	// a child's start costs tens of milliseconds of CPU (the exec, the Go
	// runtime, the package initialisers of everything the verifier links),
	// so a tree with few charts to render is served by one child. Waiting
	// about what a start costs, and no longer, bounds what either choice
	// can lose against the other (the rent-or-buy rule): a tree whose
	// renders keep queueing (a monorepo's charts with subcharts, where
	// the children are the busiest part of the run) has its second child
	// within that wait, not after it rendered the first dozen charts
	// alone, and one chart that runs long (a hostile chart holds its child
	// up to the time bound; Sprig's genCA spends a second on RSA keys)
	// holds up the others that long at most.
	workerPatience = 50 * time.Millisecond
)

// renderWorker is one render child process.
type renderWorker struct {
	cmd      *exec.Cmd
	mem      int64
	stdin    io.WriteCloser
	enc      *gob.Encoder
	frames   chan frame
	prog     *progressWriter
	maxFrame atomic.Int64
	killed   chan struct{} // closed by kill
	killOnce sync.Once
	exited   chan struct{} // closed once the process is reaped
	waitErr  error         // set before exited is closed
	served   int
	idle     *time.Timer
}

// frame is one answer of a child, or why there is none.
type frame struct {
	data []byte
	err  error
}

var errFrameTooBig = errors.New("render answer over the output bound")

// childPool is a Sandbox's children.
type childPool struct {
	mu      sync.Mutex
	idle    []*renderWorker
	warming map[int64]int // children being started by warm, by memory bound
	busy    map[int64]int // children rendering, by memory bound
	ready   *sync.Cond    // on mu: a child came up (or failed to)
	seq     uint64
	started atomic.Int64 // children started, for tests and benchmarks
}

// warm starts children with memory bound mem in the background, up to n
// (and the render slots) idle or starting, so that the first charts of a
// tree do not each wait for a child to start (an exec and the Go runtime's
// start-up: tens of milliseconds). getWorker waits for them.
func (s *Sandbox) Warm(n int, lim Limits) {
	if !Available(lim) {
		return
	}
	mem := lim.WithDefaults().MaxMemory
	pool := &s.pool
	pool.mu.Lock()
	defer pool.mu.Unlock()
	have := pool.warming[mem]
	for _, w := range pool.idle {
		if w.mem == mem {
			have++
		}
	}
	for ; have < min(n, cap(s.slots)); have++ {
		if pool.warming == nil {
			pool.warming = map[int64]int{}
		}
		pool.warming[mem]++
		go func() {
			w, err := s.startWorker(mem)
			if err == nil {
				s.putWorker(w)
			}
			pool.mu.Lock()
			pool.warming[mem]--
			pool.ready.Broadcast()
			pool.mu.Unlock()
		}()
	}
}

// getWorker returns an idle child with memory bound mem, or one warm is
// starting, or one that comes free within workerPatience, or starts one.
// The caller gives it back with doneWorker.
func (s *Sandbox) getWorker(mem int64) (*renderWorker, error) {
	pool := &s.pool
	pool.mu.Lock()
	var patience *time.Timer
	waited := false
	defer func() {
		if patience != nil {
			patience.Stop()
		}
	}()
	if pool.busy == nil {
		pool.busy = map[int64]int{}
	}
	for {
		if w := pool.takeIdle(mem); w != nil {
			pool.busy[mem]++
			pool.mu.Unlock()
			return w, nil
		}
		if pool.warming[mem] == 0 && (pool.busy[mem] == 0 || waited) {
			break
		}
		if pool.warming[mem] == 0 && patience == nil {
			patience = time.AfterFunc(workerPatience, func() {
				pool.mu.Lock()
				waited = true
				pool.ready.Broadcast()
				pool.mu.Unlock()
			})
		}
		pool.ready.Wait()
	}
	pool.busy[mem]++
	pool.mu.Unlock()
	w, err := s.startWorker(mem)
	if err != nil {
		s.doneWorker(mem)
	}
	return w, err
}

// doneWorker says a child taken with getWorker no longer renders (it went
// back to the idle list or was killed): a chart waiting for a busy child
// then starts one.
func (s *Sandbox) doneWorker(mem int64) {
	pool := &s.pool
	pool.mu.Lock()
	pool.busy[mem]--
	pool.ready.Broadcast()
	pool.mu.Unlock()
}

// takeIdle takes a live idle child with memory bound mem off the idle list
// (pool.mu held), or returns nil.
func (pool *childPool) takeIdle(mem int64) *renderWorker {
	for i := len(pool.idle) - 1; i >= 0; i-- {
		w := pool.idle[i]
		if w.mem != mem {
			continue
		}
		pool.idle = append(pool.idle[:i], pool.idle[i+1:]...)
		w.idle.Stop()
		select {
		case <-w.exited:
			continue // died while idle
		default:
		}
		return w
	}
	return nil
}

// putWorker keeps w for the next chart, or retires it.
func (s *Sandbox) putWorker(w *renderWorker) {
	pool := &s.pool
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if w.served >= workerCharts || len(pool.idle) >= cap(s.slots) {
		go w.retire()
		return
	}
	defer pool.ready.Broadcast()
	w.idle = time.AfterFunc(workerIdle, func() {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		for i, x := range pool.idle {
			if x == w {
				pool.idle = append(pool.idle[:i], pool.idle[i+1:]...)
				go w.retire()
				return
			}
		}
	})
	pool.idle = append(pool.idle, w)
}

// startWorker starts a render child bounded to mem bytes.
func (s *Sandbox) startWorker(mem int64) (*renderWorker, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, fmt.Errorf("finding this program's executable to render in: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{
		fmt.Sprintf("%s=v2:%d", childEnv, mem),
		"GOMAXPROCS=1",
		fmt.Sprintf("GOMEMLIMIT=%d", mem),
		"GOTRACEBACK=none",
	}
	cmd.Env = append(cmd.Env, profile.ChildEnv()...)
	cmd.Dir = os.TempDir()
	childProcAttr(cmd)
	cmd.WaitDelay = 2 * time.Second
	w := &renderWorker{cmd: cmd, mem: mem, frames: make(chan frame, 1), prog: &progressWriter{},
		killed: make(chan struct{}), exited: make(chan struct{})}
	cmd.Stderr = w.prog
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the render process: %w", err)
	}
	s.pool.started.Add(1)
	w.enc = gob.NewEncoder(w.stdin)
	go w.read(bufio.NewReader(stdout))
	return w, nil
}

// read passes the child's answers on until its stdout ends, then reaps it.
func (w *renderWorker) read(r io.Reader) {
	defer func() {
		w.waitErr = w.cmd.Wait()
		close(w.exited)
	}()
	for {
		var n [8]byte
		f := frame{}
		if _, err := io.ReadFull(r, n[:]); err != nil {
			f.err = fmt.Errorf("render process ended: %w", err)
		} else if size := binary.BigEndian.Uint64(n[:]); size > uint64(w.maxFrame.Load()) {
			f.err = errFrameTooBig
			w.kill()
		} else {
			f.data = make([]byte, size)
			if _, err := io.ReadFull(r, f.data); err != nil {
				f.err = fmt.Errorf("render process ended: %w", err)
			}
		}
		select {
		case w.frames <- f:
		case <-w.killed:
			io.Copy(io.Discard, r)
			return
		}
		if f.err != nil {
			io.Copy(io.Discard, r)
			return
		}
	}
}

// kill kills the child's process group.
func (w *renderWorker) kill() {
	w.killOnce.Do(func() {
		close(w.killed)
		killChild(w.cmd)
	})
}

// retire ends an idle child: it exits when its stdin closes.
func (w *renderWorker) retire() {
	w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
	}
}

// inChild renders req in a child, bounded by lim and ctx.
func (s *Sandbox) inChild(ctx context.Context, req renderRequest, lim Limits) (*renderResponse, error) {
	pool := &s.pool
	var w *renderWorker
	var err error
	for attempt := 0; ; attempt++ {
		if w, err = s.getWorker(lim.MaxMemory); err != nil {
			return nil, err
		}
		pool.mu.Lock()
		pool.seq++
		req.Seq = pool.seq
		pool.mu.Unlock()
		w.prog.reset(req.Seq)
		w.maxFrame.Store(lim.MaxOutput + frameSlack)
		if err = sendRequest(w.stdin, w.enc, req); err == nil {
			break
		}
		// An idle child that died in between; a new one gets one try.
		w.kill()
		<-w.exited
		s.doneWorker(lim.MaxMemory)
		if attempt > 0 {
			return nil, fmt.Errorf("sending the chart to the render process: %w: %s", err, firstLine(w.prog.diag()))
		}
	}
	defer s.doneWorker(lim.MaxMemory)
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case f := <-w.frames:
		if f.err != nil {
			w.kill()
			<-w.exited
			return nil, w.failure(f.err, lim)
		}
		var res renderResponse
		if err := gob.NewDecoder(bytes.NewReader(f.data)).Decode(&res); err != nil {
			w.kill()
			return nil, fmt.Errorf("reading the render process's answer: %w", err)
		}
		w.served++
		s.putWorker(w)
		if res.Output > 0 {
			return nil, &limitError{What: "output", Template: res.Template, Detail: fmt.Sprintf("%s rendered", byteSize(res.Output))}
		}
		return &res, nil
	case <-timer.C:
		w.kill()
		<-w.exited
		return nil, &limitError{What: "time", Template: w.prog.template(), Detail: lim.Timeout.String()}
	case <-ctx.Done():
		w.kill()
		<-w.exited
		return nil, ctx.Err()
	}
}

// failure says why a child gave no answer: over the output bound, out of
// memory, killed (the CPU-time backstop, the kernel's OOM killer) or a
// crash.
func (w *renderWorker) failure(err error, lim Limits) error {
	if errors.Is(err, errFrameTooBig) {
		return &limitError{What: "output", Template: w.prog.template(), Detail: fmt.Sprintf("more than %s written", byteSize(lim.MaxOutput))}
	}
	if w.prog.oom() {
		return &limitError{What: "memory", Template: w.prog.template(), Detail: firstLine(w.prog.diag())}
	}
	var ee *exec.ExitError
	if errors.As(w.waitErr, &ee) && ee.ProcessState != nil && !ee.Exited() {
		return &limitError{What: "time", Template: w.prog.template(), Detail: ee.ProcessState.String()}
	}
	return fmt.Errorf("render process: %v: %s", w.waitErr, firstLine(w.prog.diag()))
}

// runRenderChild is the child's main: bound itself, then render each chart
// on stdin and answer on stdout until stdin ends. Its exit code is 0 when
// stdin ended.
func runChild(spec string, stdin io.Reader, stdout, stderr io.Writer) int {
	var mem int64
	if _, err := fmt.Sscanf(spec, "v2:%d", &mem); err != nil || mem <= 0 {
		fmt.Fprintf(stderr, "pinseal render child: bad %s=%q\n", childEnv, spec)
		return 3
	}
	if err := limitSelf(mem); err != nil {
		fmt.Fprintf(stderr, "pinseal render child: cannot bound itself: %v\n", err)
		return 3
	}
	// Helm's warnings (the standard log package) as quoted slog records:
	// a chart's value key cannot forge a progress mark or a line of the
	// parent's log.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, nil)))
	in := bufio.NewReader(stdin)
	dec := gob.NewDecoder(in)
	out := bufio.NewWriter(stdout)
	var keep []byte // the files' buffer, kept for the next chart when small
	for {
		var req renderRequest
		var err error
		if keep, err = recvRequest(in, dec, &req, keep); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(stderr, "pinseal render child: reading a request: %v\n", err)
			return 3
		}
		// Backstops for a parent that is gone: a watchdog and the CPU
		// time limit.
		backstop := req.Timeout + childBackstopGrace
		if err := limitCPU(backstop); err != nil {
			fmt.Fprintf(stderr, "pinseal render child: cannot bound its CPU time: %v\n", err)
			return 3
		}
		watchdog := time.AfterFunc(backstop, func() {
			fmt.Fprintln(stderr, "pinseal render child: a chart ran past its time bound")
			os.Exit(4)
		})
		res := renderForChild(req, stderr)
		watchdog.Stop()
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(res); err != nil {
			fmt.Fprintf(stderr, "pinseal render child: encoding the answer: %v\n", err)
			return 3
		}
		res = nil
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(buf.Len()))
		out.Write(n[:])
		out.Write(buf.Bytes())
		if err := out.Flush(); err != nil {
			return 3
		}
	}
}

// sendRequest writes req to a child: the request without the files'
// bytes through enc, then the bytes of each file, raw, as they lie. Gob
// would copy each file into its message buffer here and the child would
// read the message into a buffer of its own and copy each file out of it
// again: megabytes a chart for the charts of a monorepo, each copy fresh
// memory the kernel faults in.
func sendRequest(w io.Writer, enc *gob.Encoder, req renderRequest) error {
	files := req.Files
	req.Files = make([]renderFile, len(files))
	for i, f := range files {
		req.Files[i] = renderFile{Name: f.Name, Size: len(f.Data)}
	}
	if err := enc.Encode(&req); err != nil {
		return err
	}
	for _, f := range files {
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
	}
	return nil
}

// maxRequestFiles bounds the files' bytes of one request a child reads
// (the parent sends what it read from the chart, which its own bounds
// keep far below this); keepRequestBuffer is the largest buffer of them
// a child keeps for the next chart (kept, it counts against the next
// chart's memory bound).
const (
	maxRequestFiles   = 1 << 30
	keepRequestBuffer = 4 << 20
)

// recvRequest reads what sendRequest wrote into req: the files' bytes
// into one buffer (buf when it is large enough), each file a slice of it.
// It returns the buffer to keep for the next request (nil when it is over
// keepRequestBuffer). The files' bytes must not be used past the answer
// to req.
func recvRequest(r *bufio.Reader, dec *gob.Decoder, req *renderRequest, buf []byte) ([]byte, error) {
	if err := dec.Decode(req); err != nil {
		return buf, err
	}
	total := 0
	for _, f := range req.Files {
		if f.Size < 0 || f.Size > maxRequestFiles-total {
			return buf, fmt.Errorf("request files over %d bytes", maxRequestFiles)
		}
		total += f.Size
	}
	if cap(buf) < total {
		buf = make([]byte, total)
	}
	data := buf[:total]
	if _, err := io.ReadFull(r, data); err != nil {
		return buf, fmt.Errorf("reading the chart's files: %w", err)
	}
	for i := range req.Files {
		n := req.Files[i].Size
		if n > 0 { // an empty file stays nil, as gob gives it
			req.Files[i].Data, data = data[:n:n], data[n:]
		}
	}
	if cap(buf) > keepRequestBuffer {
		buf = nil
	}
	return buf, nil
}

// Close ends the Sandbox's idle children and waits for them: they are then
// reaped, so their CPU time and memory count in this process's resource
// usage (what time(1) reports), and none is left to die only with its
// parent. A render still running keeps its child, which is retired when the
// render returns. The Sandbox may be used again after Close (children
// start anew).
func (s *Sandbox) Close() {
	pool := &s.pool
	pool.mu.Lock()
	idle := pool.idle
	pool.idle = nil
	pool.mu.Unlock()
	for _, w := range idle {
		w.idle.Stop()
		w.retire()
	}
}

// Started is how many children the Sandbox has started, for tests and
// benchmarks of its reuse.
func (s *Sandbox) Started() int64 { return s.pool.started.Load() }

// childBackstopGrace is how long past a chart's time bound a render child
// whose parent stopped watching ends the chart itself: the parent's own
// timer fires first whenever it is alive.
const childBackstopGrace = 2 * time.Second
